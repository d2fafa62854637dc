/**
 * Why one engine gave no usable answer. `empty`: it answered with no results; `blocked`: a
 * captcha or consent wall; `garbage`: an answer that is not what the engine's kind promises;
 * `circuit_open`: not asked, its breaker is open; `missing_key`/`no_browser`: not runnable here.
 */
export type EngineFailureKind =
  | 'quota'
  | 'permission'
  | 'rate_limited'
  | 'transport'
  | 'timeout'
  | 'empty'
  | 'blocked'
  | 'garbage'
  | 'refused'
  | 'cancelled'
  | 'circuit_open'
  | 'missing_key'
  | 'no_browser'

/** One engine's failure, as metadata and the failure envelope show it. */
export interface EngineFailure {
  engine: string
  kind: EngineFailureKind
  message: string
  status?: number
  retry_after_ms?: number
}

/** Failures that say nothing about the engine's health (never counted by its breaker). */
export const NOT_HEALTH: ReadonlySet<EngineFailureKind> = new Set([
  'cancelled',
  'circuit_open',
  'missing_key',
  'no_browser',
  'refused',
])

/** The failure kind of a non-2xx HTTP status. */
export function kindOfStatus(status: number): EngineFailureKind {
  if (status === 429) return 'rate_limited'
  if (status === 402) return 'quota'
  if (status === 401 || status === 403) return 'permission'
  return 'transport'
}

/** `Retry-After` (seconds or an HTTP date) in ms from `nowMs`; undefined when absent or bad. */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number,
): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed), 86_400) * 1000
  const date = Date.parse(trimmed)
  if (Number.isNaN(date)) return undefined
  return Math.max(0, Math.min(date - nowMs, 86_400_000))
}
