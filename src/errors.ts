/**
 * Machine-readable error codes raised inside isoagent. Workspace adapters throw these; the kernel
 * turns them into a typed {@link ToolErrorKind} on a failed {@link ToolResult}.
 */
export type IsoagentErrorCode =
  | 'invalid_argument'
  | 'invalid_path'
  | 'path_escape'
  | 'not_found'
  | 'already_exists'
  | 'is_directory'
  | 'not_directory'
  | 'not_empty'
  | 'binary_file'
  | 'invalid_utf8'
  | 'too_large'
  | 'version_conflict'
  | 'permission_denied'
  | 'hook_denied'
  | 'unsupported'
  | 'transport'
  | 'rate_limited'
  | 'partial_failure'
  | 'retrieval_requirements_not_met'
  | 'cancelled'
  | 'timeout'
  | 'io'
  | 'internal'

/** Options for {@link IsoagentError}. */
export interface IsoagentErrorOptions {
  /** Structured detail a caller can act on (paths, expected/actual values, limits). */
  data?: Record<string, unknown>
  /** The underlying error, kept for diagnosis; never shown to a model verbatim. */
  cause?: unknown
}

/**
 * The one error type of isoagent: a `code`, a human-actionable `message`, structured `data`
 * and an optional `cause`. Serialises with {@link IsoagentError.toJSON}.
 */
export class IsoagentError extends Error {
  override readonly name = 'IsoagentError'
  readonly code: IsoagentErrorCode
  readonly data: Record<string, unknown>

  constructor(code: IsoagentErrorCode, message: string, options: IsoagentErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.data = options.data ?? {}
  }

  /** Plain JSON: `{ name, code, message, data, cause? }` (cause reduced to its message). */
  toJSON(): {
    name: string
    code: IsoagentErrorCode
    message: string
    data: Record<string, unknown>
    cause?: string
  } {
    const json: ReturnType<IsoagentError['toJSON']> = {
      name: this.name,
      code: this.code,
      message: this.message,
      data: this.data,
    }
    if (this.cause !== undefined) {
      json.cause = this.cause instanceof Error ? this.cause.message : String(this.cause)
    }
    return json
  }

  /** True when `value` is an IsoagentError, optionally with one of `codes`. */
  static is(value: unknown, ...codes: IsoagentErrorCode[]): value is IsoagentError {
    return value instanceof IsoagentError && (codes.length === 0 || codes.includes(value.code))
  }
}
