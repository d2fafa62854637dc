/** The `code` of an HTTP API error body. */
export type ApiErrorCode =
  | 'unauthorized'
  | 'not_found'
  | 'method_not_allowed'
  | 'session_not_found'
  | 'confirmation_not_found'
  | 'confirmation_answered'
  | 'artifact_not_found'
  | 'invalid_json'
  | 'invalid_argument'
  | 'payload_too_large'
  | 'too_many_sessions'
  | 'session_closed'
  | 'workspace_unavailable'
  | 'not_configured'
  | 'shutting_down'
  | 'model_not_configured'
  | 'retrieval_not_configured'
  | 'turn_in_progress'
  | 'task_not_found'
  | 'workflows_not_configured'
  | 'workflow_not_found'
  | 'workflow_running'
  | 'workflow_ended'
  | 'permission_denied'
  | 'mcp_connect_failed'
  | 'host_not_allowed'
  | 'internal_error'

/** The body of every error response: `{ "error": { "code", "message" } }`. */
export interface ApiErrorBody {
  error: { code: ApiErrorCode; message: string }
}

/** An error a route throws to answer with `status` and a typed JSON body (never a stack). */
export class ApiError extends Error {
  override readonly name = 'ApiError'
  readonly status: number
  readonly code: ApiErrorCode
  /** Headers the response carries (e.g. `retry-after` on a 429). */
  readonly headers: Record<string, string>

  constructor(
    status: number,
    code: ApiErrorCode,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(message)
    this.status = status
    this.code = code
    this.headers = headers
  }

  /** The JSON response this error answers with. */
  toResponse(headers?: Record<string, string>): Response {
    return errorResponse(this.status, this.code, this.message, { ...this.headers, ...headers })
  }
}

/** A JSON error response. */
export function errorResponse(
  status: number,
  code: ApiErrorCode,
  message: string,
  headers: Record<string, string> = {},
): Response {
  const body: ApiErrorBody = { error: { code, message } }
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  })
}
