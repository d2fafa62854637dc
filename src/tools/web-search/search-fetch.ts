import { IsoagentError } from '../../errors.ts'
import type { AddressCheck } from '../../net/http-transport.ts'
import type { NetOptions } from '../../net/net-options.ts'
import { safeFetch } from '../../net/safe-fetch.ts'
import { checkHostLiteral, checkUrl } from '../../net/url-rules.ts'

/** The answer of {@link SearchFetch}: the final response and how its address was checked. */
export interface SearchResponse {
  response: Response
  finalUrl: string
  addressCheck: AddressCheck
}

/** The HTTP of the HTML/RSS/API tiers: GET `url` through the session's safe transport. */
export type SearchFetch = (
  url: string,
  init: { headers: Record<string, string>; signal: AbortSignal },
) => Promise<SearchResponse>

/**
 * Why `url` may not be requested (undefined when it may), by the safe HTTP policy's URL rules
 * and literal address checks: what the browser tier can check before the browser loads it.
 */
export function refuseLiteral(url: URL, net: NetOptions | undefined): string | undefined {
  try {
    checkHostLiteral(checkUrl(url), net?.allowHosts)
    return undefined
  } catch (error) {
    if (IsoagentError.is(error, 'invalid_argument', 'permission_denied')) return error.message
    throw error
  }
}

/** True when `error` is the safe HTTP policy refusing a destination (a redirect's, say). */
export function isRefusal(error: unknown): error is IsoagentError {
  return IsoagentError.is(error, 'invalid_argument', 'permission_denied')
}

/** A {@link SearchFetch} through `safeFetch` with the session's network options. */
export function netSearchFetch(net: NetOptions | undefined): SearchFetch {
  return async (url, init) => {
    const result = await safeFetch(url, { headers: init.headers, signal: init.signal }, net ?? {})
    return {
      response: result.response,
      finalUrl: result.finalUrl.href,
      addressCheck: result.addressCheck,
    }
  }
}
