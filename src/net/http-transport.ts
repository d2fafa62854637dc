import type { NetOptions } from './net-options.ts'

/**
 * How far a transport checks where a request really goes:
 * - `resolved`: the transport resolves names itself, refuses an answer holding any non-public
 *   address (unless the host is on `allowHosts`) and connects only to the addresses it checked,
 *   so a DNS answer cannot change between check and connect (Node).
 * - `literal_only`: only literal addresses in URLs and redirects are checked; names are
 *   resolved by the runtime (workerd, browsers).
 */
export type AddressCheck = 'resolved' | 'literal_only'

/** One hop of a request, already checked against the URL rules and the literal policy. */
export interface HttpTransportRequest {
  url: URL
  method: string
  headers: Headers
  body?: Uint8Array<ArrayBuffer> | string
  signal?: AbortSignal
  /** The session's network options: `allowHosts` and `resolve` for transports that resolve. */
  net: NetOptions
}

/**
 * The port through which the core does HTTP. A transport sends exactly one hop: it never
 * follows redirects (`safeFetch` does, re-checking each). Errors: it rejects with the
 * `IsoagentError` of a refused address (`permission_denied`), or with the runtime's own error
 * for I/O failures and aborts (which `safeFetch` types).
 */
export interface HttpTransport {
  readonly addressCheck: AddressCheck
  /** Send one request; a 3xx comes back as is, with its `Location` header readable. */
  fetch(request: HttpTransportRequest): Promise<Response>
}

/** What {@link safeFetch} needs: the session's network options and, optionally, a transport. */
export interface NetContext extends NetOptions {
  /** Transport for the hops (default: the one `setDefaultHttpTransport` set, else Web fetch). */
  transport?: HttpTransport
}
