import type { HttpTransport } from './http-transport.ts'

/**
 * The transport of every runtime with a Web `fetch` (workerd, browsers; on Node every package
 * entry installs the resolving transport instead): `redirect: 'manual'`, names resolved by the
 * runtime, so only literals are checked (`literal_only`). In a browser a redirect comes back
 * opaque and fails the request.
 */
export const webHttpTransport: HttpTransport = {
  addressCheck: 'literal_only',
  fetch: (request) =>
    fetch(request.url.href, {
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
      redirect: 'manual',
      signal: request.signal ?? null,
    }),
}

let defaultTransport: HttpTransport = webHttpTransport

/**
 * Make `transport` the one requests use when their context names none (on Node, every package
 * entry installs the resolving transport through its `"node"` export condition).
 */
export function setDefaultHttpTransport(transport: HttpTransport): void {
  defaultTransport = transport
}

/** The transport requests use when their context names none. */
export function defaultHttpTransport(): HttpTransport {
  return defaultTransport
}
