import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { IsoagentError } from '../errors.ts'

/** JSON-RPC errors by which a server refuses a request (the rest are its failures). */
const REFUSALS: ReadonlySet<number> = new Set([
  ErrorCode.InvalidParams,
  ErrorCode.InvalidRequest,
  ErrorCode.MethodNotFound,
])

/**
 * The typed error for a failure of MCP operation `op` (`initialize`, `tools/list`, a tool):
 * the caller's abort → `cancelled`; the SDK's request timeout → `timeout`; a closed connection,
 * an HTTP or socket failure → `transport` (401/403: `permission_denied`); invalid params, an
 * invalid request or an unknown method → `invalid_argument`; any other JSON-RPC error → `transport`.
 */
export function mcpError(
  error: unknown,
  op: string,
  timeoutMs: number,
  signal?: AbortSignal,
): IsoagentError {
  if (signal?.aborted) return new IsoagentError('cancelled', `${op} was cancelled`)
  if (IsoagentError.is(error)) return error
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout)
      return new IsoagentError('timeout', `${op} timed out after ${timeoutMs} ms`, {
        data: { duration_ms: timeoutMs },
      })
    if (error.code === ErrorCode.ConnectionClosed)
      return new IsoagentError('transport', `${op}: the MCP connection closed`)
    if (REFUSALS.has(error.code))
      return new IsoagentError('invalid_argument', `${op}: ${error.message}`)
    return new IsoagentError('transport', `${op}: ${error.message}`)
  }
  const status = (error as { code?: unknown } | null)?.code
  const message = error instanceof Error ? error.message : String(error)
  if (status === 401 || status === 403)
    return new IsoagentError(
      'permission_denied',
      `${op}: the server refused the credentials (${status})`,
    )
  return new IsoagentError('transport', `${op}: ${message}`, { cause: error })
}
