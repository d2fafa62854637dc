import ipaddr from 'ipaddr.js'

/** Network options a search uses (`SessionOptions.net`). */
export interface SearchNetOptions {
  /** Host or address literals let through the address policy (tests, intranets). */
  allowHosts?: string[]
  userAgent?: string
}

/** The answer of {@link SearchFetch}: the final response and how its address was checked. */
export interface SearchResponse {
  response: Response
  finalUrl: string
  addressCheck: 'literal_only' | 'resolved'
}

/** The HTTP of the HTML/RSS/API tiers: GET `url` through the session's safe transport. */
export type SearchFetch = (
  url: string,
  init: { headers: Record<string, string>; signal: AbortSignal },
) => Promise<SearchResponse>

/** Why `url` may not be requested (undefined when it may), checking its literal host only. */
export function refuseLiteral(url: URL, net: SearchNetOptions | undefined): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'only http(s) URLs are searched'
  if (url.username !== '' || url.password !== '') return 'URLs with credentials are refused'
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase()
  if (net?.allowHosts?.some((h) => h.toLowerCase() === host)) return undefined
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a local name`
  if (!ipaddr.isValid(host)) return undefined
  const range = ipaddr.process(host).range()
  return range === 'unicast' ? undefined : `${host} is a ${range} address`
}

/** A {@link SearchFetch} over the runtime's `fetch`: redirects followed by hand, each checked. */
export function literalSearchFetch(net: SearchNetOptions | undefined): SearchFetch {
  return async (url, init) => {
    let current = new URL(url)
    for (let hop = 0; hop <= 10; hop++) {
      const refusal = refuseLiteral(current, net)
      if (refusal !== undefined) throw new RefusedUrlError(refusal)
      const response = await fetch(current.href, {
        headers: init.headers,
        signal: init.signal,
        redirect: 'manual',
      })
      const location = response.headers.get('location')
      if (response.status < 300 || response.status >= 400 || location === null)
        return { response, finalUrl: current.href, addressCheck: 'literal_only' }
      await response.body?.cancel()
      current = new URL(location, current)
    }
    throw new RefusedUrlError('more than 10 redirects')
  }
}

/** A URL the address policy refuses. */
export class RefusedUrlError extends Error {
  override readonly name = 'RefusedUrlError'
}
