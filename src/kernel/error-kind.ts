import { IsoagentError, type IsoagentErrorCode } from '../errors.ts'
import type { ToolErrorKind } from '../tool-result.ts'

/** A one-line, human-actionable description of any thrown value (never a stack). */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message
  return String(error)
}

/** The typed {@link ToolErrorKind} for an error thrown while running tool `op`. */
export function errorKindOf(error: unknown, op: string): ToolErrorKind {
  if (!IsoagentError.is(error)) {
    return { type: 'transport', op, message: `internal error: ${describeError(error)}` }
  }
  const message = error.message
  const data = error.data
  switch (error.code) {
    case 'not_found':
      return typeof data.path === 'string'
        ? { type: 'not_found', path: data.path }
        : { type: 'not_found' }
    case 'version_conflict':
      return {
        type: 'version_conflict',
        path: String(data.path ?? ''),
        expected: (data.expected as string | number | null | undefined) ?? null,
        actual: (data.actual as string | number | null | undefined) ?? null,
      }
    case 'path_escape':
    case 'permission_denied':
      return { type: 'permission_denied', message }
    case 'binary_file':
    case 'unsupported':
      return { type: 'unsupported', message }
    case 'cancelled':
      return { type: 'cancelled', op }
    case 'timeout':
      return { type: 'timeout', op, duration_ms: Number(data.duration_ms ?? 0) }
    case 'io':
    case 'internal':
    case 'transport':
      return { type: 'transport', op, message }
    case 'rate_limited':
      return {
        type: 'rate_limited',
        retry_after_ms: typeof data.retry_after_ms === 'number' ? data.retry_after_ms : null,
      }
    default:
      return { type: 'invalid_argument', message }
  }
}

/**
 * The {@link IsoagentErrorCode} for a failed result's `errorKind`: its `type`, so a caller can
 * switch on `error.code` exactly as on `result.errorKind.type`; `internal` when there is none.
 */
export function errorCodeOf(kind: ToolErrorKind | undefined): IsoagentErrorCode {
  return kind === undefined ? 'internal' : kind.type
}
