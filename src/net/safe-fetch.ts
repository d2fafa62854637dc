import { IsoagentError } from '../errors.ts'
import type { AddressCheck, HttpTransport, NetContext } from './http-transport.ts'
import { DEFAULT_USER_AGENT } from './net-options.ts'
import { checkHostLiteral, checkUrl, urlHost } from './url-rules.ts'
import { defaultHttpTransport } from './web-transport.ts'

/** Most redirects one request follows. */
export const MAX_REDIRECTS = 10

/** Headers a cross-origin redirect never carries on (every header but {@link CROSS_ORIGIN_HEADERS}). */
export const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'if-range']

/**
 * The only headers a cross-origin redirect carries on: an engine's API key may sit in any
 * header of its own (`x-subscription-token`, …), so everything else is dropped.
 */
export const CROSS_ORIGIN_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'accept-encoding',
  'accept-language',
  'cache-control',
  'content-length',
  'content-type',
  'pragma',
  'range',
  'user-agent',
])

/** A request of {@link safeFetch}. The body is bytes or text, so a 307/308 can resend it. */
export interface SafeFetchInit {
  method?: string
  headers?: HeadersInit
  body?: Uint8Array<ArrayBuffer> | string
  signal?: AbortSignal
  /** Most redirects followed, 0..10 (default 10); past it the request fails (`transport`). */
  maxRedirects?: number
}

/** The answer of {@link safeFetch}: the last hop's response (never a followed 3xx). */
export interface SafeFetchResult {
  response: Response
  /** URL of the last hop (fragment dropped). */
  finalUrl: URL
  /** What the transport could check (`resolved` on Node, whichever package entry was imported). */
  addressCheck: AddressCheck
  /** Redirects followed. */
  redirects: number
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])

/**
 * Fetch `url` under the safe HTTP policy: http(s) only, no userinfo, fragment dropped; every hop
 * (the first and each redirect, at most 10) re-checked against the address policy (literals
 * here, resolved addresses in transports that resolve); a cross-origin redirect carries on only
 * {@link CROSS_ORIGIN_HEADERS}, so `Authorization`, `Cookie`, `If-Range` and any API-key header
 * stay behind.
 *
 * Rejects with an `IsoagentError`: `invalid_argument` (a URL the rules refuse),
 * `permission_denied` (a non-public destination, `data.host`/`data.range`), `transport`
 * (I/O failure, too many redirects), `timeout` (the signal's reason was a `TimeoutError`) or
 * `cancelled` (any other abort).
 */
export async function safeFetch(
  url: string | URL,
  init: SafeFetchInit = {},
  net: NetContext = {},
): Promise<SafeFetchResult> {
  const transport: HttpTransport = net.transport ?? defaultHttpTransport()
  const maxRedirects = Math.min(
    Math.max(0, Math.floor(init.maxRedirects ?? MAX_REDIRECTS)),
    MAX_REDIRECTS,
  )
  const headers = new Headers(init.headers)
  if (!headers.has('user-agent')) headers.set('user-agent', net.userAgent ?? DEFAULT_USER_AGENT)
  let method = (init.method ?? 'GET').toUpperCase()
  let body = init.body
  let current = checkUrl(url)
  for (let redirects = 0; ; redirects++) {
    checkHostLiteral(current, net.allowHosts)
    const response = await send(transport, {
      url: current,
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      ...(init.signal === undefined ? {} : { signal: init.signal }),
      net,
    })
    const location = response.headers.get('location')
    if (response.type === 'opaqueredirect') {
      throw new IsoagentError(
        'transport',
        `${urlHost(current)} answered with a redirect this runtime does not let us read`,
      )
    }
    if (!REDIRECTS.has(response.status) || location === null) {
      return { response, finalUrl: current, addressCheck: transport.addressCheck, redirects }
    }
    await response.body?.cancel().catch(() => undefined)
    if (redirects >= maxRedirects)
      throw new IsoagentError('transport', `more than ${maxRedirects} redirects`, {
        data: { redirects: redirects + 1 },
      })
    const next = checkUrl(location, current)
    if (next.origin !== current.origin)
      for (const name of [...headers.keys()])
        if (!CROSS_ORIGIN_HEADERS.has(name)) headers.delete(name)
    if (
      response.status === 303 ||
      ((response.status === 301 || response.status === 302) && method === 'POST')
    ) {
      if (method !== 'HEAD') method = 'GET'
      body = undefined
      headers.delete('content-type')
      headers.delete('content-length')
    }
    current = next
  }
}

async function send(
  transport: HttpTransport,
  request: Parameters<HttpTransport['fetch']>[0],
): Promise<Response> {
  try {
    return await transport.fetch(request)
  } catch (error) {
    // A pooled keep-alive connection the server closed meanwhile: one new attempt, GET/HEAD only.
    if (
      (request.method === 'GET' || request.method === 'HEAD') &&
      staleConnection(error) &&
      request.signal?.aborted !== true
    ) {
      try {
        return await transport.fetch(request)
      } catch (again) {
        throw typedFetchError(again, request.url, request.signal)
      }
    }
    throw typedFetchError(error, request.url, request.signal)
  }
}

const STALE_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE'])

function staleConnection(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    if (IsoagentError.is(e)) return false
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && STALE_CODES.has(code)) return true
    e = e.cause
  }
  return false
}

/** The `IsoagentError` for an error a transport rejected with. */
export function typedFetchError(error: unknown, url: URL, signal?: AbortSignal): IsoagentError {
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 8; depth++) {
    if (IsoagentError.is(e)) return e
    e = e instanceof Error ? e.cause : undefined
  }
  if (signal?.aborted === true) {
    const reason: unknown = signal.reason
    if (IsoagentError.is(reason)) return reason
    if (reason instanceof Error && reason.name === 'TimeoutError')
      return new IsoagentError('timeout', `request to ${urlHost(url)} timed out`)
    return new IsoagentError('cancelled', `request to ${urlHost(url)} was cancelled`)
  }
  return new IsoagentError('transport', `request to ${urlHost(url)} failed: ${describe(error)}`, {
    cause: error,
  })
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause
  if (cause instanceof Error && cause.message !== '') return `${error.message} (${cause.message})`
  return error.message
}
