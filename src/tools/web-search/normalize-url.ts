const TRACKING = /^(utm_[a-z]+|gclid|fbclid|msclkid|yclid|mc_[a-z]+|ref_src)$/i

/** Query parameters of known redirect wrappers that carry the real target. */
const WRAPPER_PARAMS: readonly { path: RegExp; params: readonly string[] }[] = [
  { path: /^\/url$/, params: ['q', 'url'] },
  { path: /^\/l\/?$/, params: ['uddg', 'u'] },
  { path: /^\/(link|redirect|out|goto|r)\/?$/, params: ['url', 'u', 'to', 'target', 'dest'] },
]

function decodeBingTarget(value: string): string | undefined {
  if (!value.startsWith('a1')) return undefined
  try {
    const b64 = value.slice(2).replaceAll('-', '+').replaceAll('_', '/')
    return atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4))
  } catch {
    return undefined
  }
}

function parseHttp(raw: string, base?: string): URL | undefined {
  let url: URL
  try {
    url = new URL(raw.trim(), base)
  } catch {
    return undefined
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined
}

/** The target of a redirect wrapper (Google `/url?q=`, DuckDuckGo `/l/?uddg=`, Bing `/ck/a`). */
function unwrapOnce(url: URL): URL | undefined {
  if (/^\/ck\/a\/?$/.test(url.pathname)) {
    const target = decodeBingTarget(url.searchParams.get('u') ?? '')
    return target === undefined ? undefined : parseHttp(target)
  }
  for (const wrapper of WRAPPER_PARAMS) {
    if (!wrapper.path.test(url.pathname)) continue
    for (const param of wrapper.params) {
      const value = url.searchParams.get(param)
      const target = value === null ? undefined : parseHttp(value)
      if (target !== undefined) return target
    }
  }
  return undefined
}

/**
 * A result URL made absolute against `base`, redirect wrappers unwrapped (up to 3 deep), the
 * fragment and tracking parameters dropped; undefined when it is not an http(s) URL.
 */
export function cleanResultUrl(raw: string, base?: string): string | undefined {
  let url = parseHttp(raw, base)
  if (url === undefined) return undefined
  for (let depth = 0; depth < 3; depth++) {
    const inner = unwrapOnce(url)
    if (inner === undefined) break
    url = inner
  }
  url.hash = ''
  for (const key of [...url.searchParams.keys()])
    if (TRACKING.test(key)) url.searchParams.delete(key)
  if (url.username !== '' || url.password !== '') {
    url.username = ''
    url.password = ''
  }
  return url.href
}

/** The key two results share when they are the same page (scheme, `www.` and `/` ignored). */
export function dedupeKey(href: string): string {
  const url = new URL(href)
  const host = url.hostname.toLowerCase().replace(/^www\./, '')
  const path = url.pathname.replace(/\/+$/, '') || '/'
  url.searchParams.sort()
  const query = url.searchParams.toString()
  return `${host}${url.port === '' ? '' : `:${url.port}`}${path}${query === '' ? '' : `?${query}`}`
}

/** The registrable-ish domain of a result (host without `www.`), for the distinct-domain count. */
export function domainOf(href: string): string {
  return new URL(href).hostname.toLowerCase().replace(/^www\./, '')
}
