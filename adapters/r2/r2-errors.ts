import { IsoagentError, WorkspacePath } from '../../src/index.ts'

/** What a binding call was for, to say so in a failure. */
export interface R2ErrorContext {
  op: string
  /** Name of the binding (for messages). */
  binding: string
  path?: string
}

/**
 * The numeric code R2 puts at the end of a binding error's message (`get: The requested range is
 * not satisfiable (10039)`), or undefined.
 */
export function r2CodeOf(error: unknown): number | undefined {
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : ''
  const match = /\((\d{4,6})\)\s*$/.exec(message)
  return match ? Number(match[1]) : undefined
}

/** The range of a `get` starts at or past the end of the object (R2 code 10039). */
export const isUnsatisfiableRange = (error: unknown) => r2CodeOf(error) === 10039

const DENIED = new Set([10002, 10003, 10018, 10035, 10042])
// Internal error, service unavailable, too many requests (the same object, or the bucket).
const RETRYABLE = new Set([10001, 10043, 10054, 10058])

/**
 * A short, human {@link IsoagentError} for a failed R2 binding call: never a stack. Missing
 * bucket (10006) and key (10007) → `not_found`; refusals → `permission_denied`; invalid names
 * (10020) → `invalid_path`; entity too large → `too_large`; not implemented (10004) →
 * `unsupported`; aborted → `cancelled`; throttling and internal errors → `io` with `retryable`;
 * anything else → `io` with the R2 code.
 */
export function r2Error(error: unknown, context: R2ErrorContext): IsoagentError {
  if (error instanceof IsoagentError) return error
  const { op, binding, path } = context
  const shown =
    path === undefined ? `R2 bucket ${binding}` : WorkspacePath.display(path as WorkspacePath)
  const code = r2CodeOf(error)
  const name = error instanceof Error ? error.name : undefined
  const data = {
    op,
    binding,
    ...(path === undefined ? {} : { path }),
    ...(code === undefined ? {} : { r2_code: code }),
  }
  const cause = { cause: error }
  if (name === 'AbortError')
    return new IsoagentError('cancelled', `${op} of ${shown} cancelled`, { data, ...cause })
  if (code === 10006)
    return new IsoagentError('not_found', `the R2 bucket bound as ${binding} does not exist`, {
      data,
      ...cause,
    })
  if (code === 10007)
    return new IsoagentError('not_found', `not found: ${shown}`, { data, ...cause })
  if (code !== undefined && DENIED.has(code))
    return new IsoagentError('permission_denied', `R2 refused ${op} of ${shown} (${code})`, {
      data,
      ...cause,
    })
  if (code === 10020)
    return new IsoagentError('invalid_path', `R2 refused the object name of ${shown}`, {
      data,
      ...cause,
    })
  if (code === 100100)
    return new IsoagentError('too_large', `${shown} is larger than R2 accepts in one put`, {
      data,
      ...cause,
    })
  if (code === 10004)
    return new IsoagentError('unsupported', `R2 does not support ${op} here (10004)`, {
      data,
      ...cause,
    })
  const retryable = code === undefined || RETRYABLE.has(code)
  return new IsoagentError(
    'io',
    `R2 ${op} of ${shown} failed${code === undefined ? '' : ` (${code})`}${retryable ? '; retry later' : ''}`,
    { data: { ...data, retryable }, ...cause },
  )
}
