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
 * an HTTP or socket failure → `transport`; invalid params, an
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
  const message = error instanceof Error ? error.message : String(error)
  return new IsoagentError('transport', `${op}: ${message}`, { cause: error })
}
