/**
 * Typed failure of a tool call, tagged by `type`. Every failed {@link ToolResult} carries one.
 */
export type ToolErrorKind =
  | {
      type: 'version_conflict'
      path: string
      expected: string | number | null
      actual: string | number | null
    }
  | { type: 'not_found'; path?: string }
  | { type: 'invalid_argument'; message: string }
  | { type: 'hook_denied'; reason: string; retryable: boolean; retry_after_ms: number | null }
  | { type: 'permission_denied'; message?: string; reason?: PermissionDeniedReason }
  | { type: 'unsupported'; message?: string }
  | { type: 'timeout'; op: string; duration_ms: number }
  | { type: 'transport'; op: string; message?: string }
  | { type: 'cancelled'; op: string }
  | { type: 'partial_failure'; failed: number; total: number }
  | { type: 'rate_limited'; retry_after_ms: number | null }
  | RetrievalRequirementsNotMet

/**
 * Which gate of the kernel refused a call with `permission_denied` (absent when a tool refused,
 * e.g. a path outside the workspace or a private address): a `deny` rule or the default
 * decision; a human's refusal of an `ask`; an `ask` left unanswered past
 * `confirmationTimeoutMs`; an `ask` nobody could be asked about (the client cannot confirm,
 * e.g. an MCP client without elicitation; nobody refused it); the session's budget.
 */
export type PermissionDeniedReason =
  | 'denied_by_rule'
  | 'confirmation_refused'
  | 'confirmation_timed_out'
  | 'confirmation_unavailable'
  | 'budget_exhausted'

/**
 * `web_search` failed closed: the whole cascade missed the structural requirements. Carries what
 * the engines gave (`candidates`, usable or not), the observed health, the thresholds and each
 * engine's failure (with `retry_after_ms` where an engine sent `Retry-After`).
 */
export type RetrievalRequirementsNotMet = {
  type: 'retrieval_requirements_not_met'
  message: string
  candidates: { engine: string; title: string; url: string; usable: boolean }[]
  health: Record<string, number>
  thresholds: {
    min_usable_results: number
    min_distinct_domains: number
    require_title_and_url: boolean
  }
  engine_failures: {
    engine: string
    kind: string
    message: string
    status?: number
    retry_after_ms?: number
  }[]
  retry_after_ms: number | null
}

/** The result of every tool call. `exitCode` is 0 on success and 1 on failure. */
export interface ToolResult {
  name: string
  output: string
  exitCode: number
  metadata?: Record<string, unknown>
  /** Present exactly when `exitCode` is 1. */
  errorKind?: ToolErrorKind
  /** JSON of `metadata`, for SDK parity. Computed on access; not an own enumerable field. */
  readonly metadataJson?: string
}

/** A result whose `metadataJson` is a getter on the prototype (cheap to build, not enumerable). */
class Result {
  declare name: string
  declare output: string
  declare exitCode: number
  declare metadata?: Record<string, unknown>
  declare errorKind?: ToolErrorKind

  get metadataJson(): string | undefined {
    return this.metadata === undefined ? undefined : JSON.stringify(this.metadata)
  }
}

function withMetadataJson(fields: Omit<ToolResult, 'metadataJson'>): ToolResult {
  return Object.assign(new Result(), fields)
}

/** A successful result. */
export function toolSuccess(
  name: string,
  output: string,
  metadata?: Record<string, unknown>,
): ToolResult {
  return withMetadataJson(
    metadata === undefined
      ? { name, output, exitCode: 0 }
      : { name, output, exitCode: 0, metadata },
  )
}

/** A failed result with its typed `errorKind`. */
export function toolFailure(
  name: string,
  output: string,
  errorKind: ToolErrorKind,
  metadata?: Record<string, unknown>,
): ToolResult {
  const result: Omit<ToolResult, 'metadataJson'> = { name, output, exitCode: 1, errorKind }
  if (metadata !== undefined) result.metadata = metadata
  return withMetadataJson(result)
}
