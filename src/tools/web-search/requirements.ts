import type { ResultSet } from './merge-results.ts'
import type { EngineRun } from './run-engine.ts'

/** What a search must have before it counts (the failure envelope's thresholds). */
export interface RetrievalRequirements {
  min_usable_results: number
  min_distinct_domains: number
  /** A usable result has a non-empty title and an http(s) URL. */
  require_title_and_url: true
}

/** What the engines run so far gave (the failure envelope's observed health). */
export interface RetrievalHealth {
  candidate_count: number
  usable_result_count: number
  distinct_domains: number
  engines_attempted: number
  engines_succeeded: number
  engine_errors: number
  engines_skipped: number
}

/** Thresholds for a search asking for `limit` results. */
export function requirementsFor(limit: number): RetrievalRequirements {
  return {
    min_usable_results: Math.min(limit, 3),
    min_distinct_domains: Math.min(limit, 2),
    require_title_and_url: true,
  }
}

export function healthOf(set: ResultSet, runs: readonly EngineRun[]): RetrievalHealth {
  return {
    candidate_count: set.candidates.length,
    usable_result_count: set.results.length,
    distinct_domains: set.distinctDomains(),
    engines_attempted: runs.filter((r) => r.outcome !== 'skipped').length,
    engines_succeeded: runs.filter((r) => r.outcome === 'ok').length,
    engine_errors: runs.filter((r) => r.outcome === 'failed' || r.failure?.kind === 'circuit_open')
      .length,
    engines_skipped: runs.filter((r) => r.outcome === 'skipped').length,
  }
}

/** The counts are met (enough usable results from enough domains). */
export function countsMet(health: RetrievalHealth, req: RetrievalRequirements): boolean {
  return (
    health.usable_result_count >= req.min_usable_results &&
    health.distinct_domains >= req.min_distinct_domains
  )
}

/** What is missing, as the tier record's reasons (empty when the requirements are met). */
export function missing(
  health: RetrievalHealth,
  req: RetrievalRequirements,
  tierErrors: number,
): string[] {
  const out: string[] = []
  if (health.usable_result_count < req.min_usable_results)
    out.push(`usable results ${health.usable_result_count} < ${req.min_usable_results}`)
  if (health.distinct_domains < req.min_distinct_domains)
    out.push(`distinct domains ${health.distinct_domains} < ${req.min_distinct_domains}`)
  if (tierErrors > 0) out.push(`engine errors ${tierErrors}`)
  return out
}
