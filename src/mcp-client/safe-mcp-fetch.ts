import { IsoagentError } from '../errors.ts'
import type { NetContext } from '../net/http-transport.ts'
import { safeFetch } from '../net/safe-fetch.ts'
import type { McpFetch } from './mcp-transports.ts'

/**
 * A fetch for MCP servers whose URL is not the host's own (given over the HTTP API): every
 * request, redirects included, goes through the safe HTTP policy of `net` (no private or
 * loopback addresses unless `net.allowHosts` names them), the OAuth discovery and token requests
 * of a client-credentials grant too. Bodies are sent as text, as the SDK writes them (JSON-RPC as a
 * string, a token request as form parameters).
 */
export function safeMcpFetch(net: NetContext = {}): McpFetch {
  return async (url, init = {}) => {
    const body = init.body instanceof URLSearchParams ? init.body.toString() : init.body
    if (body !== undefined && body !== null && typeof body !== 'string')
      throw new IsoagentError('invalid_argument', 'MCP requests carry text bodies only')
    const { response } = await safeFetch(
      url,
      {
        method: init.method ?? 'GET',
        headers: init.headers ?? {},
        ...(typeof body === 'string' ? { body } : {}),
        ...(init.signal ? { signal: init.signal } : {}),
      },
      net,
    )
    return response
  }
}
