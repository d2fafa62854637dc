import { IsoagentError } from '../errors.ts'
import { blockedRange, canonicalAddress, parseAddress } from './address-policy.ts'

/** Longest URL accepted. */
export const MAX_URL_LENGTH = 8192

/**
 * The URL a request may go to: `http:`/`https:` only, no userinfo, fragment dropped. Throws
 * `invalid_argument` otherwise. (The WHATWG parser already rewrites decimal, octal, hex and short
 * IPv4 host forms to a dotted quad.)
 */
export function checkUrl(input: string | URL, base?: URL): URL {
  const text = typeof input === 'string' ? input : input.href
  if (text.length > MAX_URL_LENGTH)
    throw new IsoagentError('invalid_argument', `URL is longer than ${MAX_URL_LENGTH} characters`)
  let url: URL
  try {
    url = new URL(text, base)
  } catch {
    throw new IsoagentError('invalid_argument', `not a valid URL: ${redactUrl(text)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new IsoagentError(
      'invalid_argument',
      `only http and https URLs are fetched, not ${url.protocol}`,
    )
  if (url.username !== '' || url.password !== '')
    throw new IsoagentError(
      'invalid_argument',
      'URLs with credentials (user:password@) are refused',
    )
  if (url.hostname === '') throw new IsoagentError('invalid_argument', 'URL has no host')
  url.hash = ''
  return url
}

/**
 * The host of `url` as the policy compares it: lower case, IPv6 without brackets, every trailing
 * dot dropped (`127.0.0.1..` and `localhost..` reach the same machine as without them).
 */
export function urlHost(url: URL): string {
  const h = url.hostname.toLowerCase()
  return h.startsWith('[') ? h.slice(1, -1) : h.replace(/\.+$/, '')
}

/** Whether `url`'s host (or `host:port`) is on `allowHosts`. */
export function hostAllowed(url: URL, allowHosts: readonly string[] | undefined): boolean {
  if (allowHosts === undefined || allowHosts.length === 0) return false
  return hostNameAllowed(urlHost(url), url.port, allowHosts)
}

/** Whether `host` (a name or address, with `port` or '') is on `allowHosts`. */
export function hostNameAllowed(
  host: string,
  port: string,
  allowHosts: readonly string[] | undefined,
): boolean {
  if (allowHosts === undefined) return false
  const bare = host.toLowerCase().replace(/\.+$/, '')
  const name = canonicalAddress(bare) ?? bare
  for (const entry of allowHosts) {
    const { host: eh, port: ep } = splitEntry(entry.trim().toLowerCase())
    const entryHost = eh.replace(/\.+$/, '')
    if ((canonicalAddress(entryHost) ?? entryHost) === name && (ep === '' || ep === port))
      return true
  }
  return false
}

function splitEntry(entry: string): { host: string; port: string } {
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry)
  if (bracket) return { host: bracket[1] ?? '', port: bracket[2] ?? '' }
  const colon = entry.lastIndexOf(':')
  if (colon > 0 && entry.indexOf(':') === colon && /^\d+$/.test(entry.slice(colon + 1)))
    return { host: entry.slice(0, colon), port: entry.slice(colon + 1) }
  return { host: entry, port: '' }
}

const LOCAL_NAMES = /(^|\.)(localhost|localdomain|local|internal|home\.arpa)$/

/**
 * Refuse `url` when its host is a literal address outside the public ranges, or a name that
 * only ever means this machine or its network (`localhost`, `*.local`, `*.internal`, ...),
 * unless it is on `allowHosts`. Throws `permission_denied` with `data.range`.
 */
export function checkHostLiteral(url: URL, allowHosts: readonly string[] | undefined): void {
  if (hostAllowed(url, allowHosts)) return
  const host = urlHost(url)
  const address = parseAddress(host)
  if (address !== undefined) {
    const range = blockedRange(address)
    if (range !== undefined) throw blockedError(host, range)
    return
  }
  if (LOCAL_NAMES.test(host)) throw blockedError(host, 'local name')
}

/** The `permission_denied` error of a refused destination. */
export function blockedError(host: string, range: string): IsoagentError {
  return new IsoagentError(
    'permission_denied',
    `${host} is not a public address (${range}); the safe HTTP policy refuses it`,
    { data: { host, range } },
  )
}

/** `url` with its query string values hidden (signed URLs never show their signatures). */
export function redactUrl(input: string | URL): string {
  let url: URL
  try {
    url = typeof input === 'string' ? new URL(input) : new URL(input.href)
  } catch {
    return String(input).replace(/[?#].*$/, '')
  }
  url.username = ''
  url.password = ''
  url.hash = ''
  if (url.search !== '') {
    const keys = [...new Set([...url.searchParams.keys()])]
    url.search = keys.map((k) => `${encodeURIComponent(k)}=REDACTED`).join('&')
  }
  return url.href
}
