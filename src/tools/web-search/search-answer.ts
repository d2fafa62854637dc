import { toolFailure, toolSuccess, type ToolResult } from '../../tool-result.ts'
import type { CascadeOutcome } from './cascade.ts'
import type { CircuitBreaker } from './circuit-breaker.ts'
import type { Coalescer, CoalescingRole } from './coalescer.ts'
import type { EngineConfig } from './engine-config.ts'
import { envelopeOf, renderFailure, renderJson, renderText } from './render.ts'
import type { WebSearchArgs } from './web-search-args.ts'

/** One finished search, as its answer reports it. */
export interface FinishedSearch {
  args: WebSearchArgs
  /** The query with its whitespace collapsed. */
  query: string
  limit: number
  /** Where the engines came from when the request named none (`builtin_default`/`session`). */
  source: string
  selected: readonly EngineConfig[]
  shared: { value: CascadeOutcome; role: CoalescingRole; waiters: number }
  breaker: CircuitBreaker
  coalescer: Coalescer<CascadeOutcome>
  /** `Date.now()` when the search started. */
  started: number
}

/** `metadata` of a `web_search` result: status, results, tiers, health, breakers, coalescing. */
function searchMetadata(s: FinishedSearch): Record<string, unknown> {
  const outcome = s.shared.value
  const results = outcome.set.results.slice(0, s.limit)
  const failures = outcome.runs.flatMap((r) => (r.failure === undefined ? [] : [r.failure]))
  const retryAfters = failures.flatMap((f) =>
    f.retry_after_ms === undefined ? [] : [f.retry_after_ms],
  )
  return {
    status: outcome.status,
    query: s.query,
    limit: s.limit,
    engine_selection_source: s.args.engines === undefined ? s.source : 'request',
    selected_engines: s.selected.map((e) => e.name),
    result_count: results.length,
    results,
    tiers: outcome.tiers,
    retrieval_health: outcome.health,
    retrieval_requirements: outcome.requirements,
    engine_failures: failures,
    circuit_breakers: Object.fromEntries(
      s.selected.map((e) => [e.name, s.breaker.snapshot(e.name)]),
    ),
    retry_context: {
      retry_budget_remaining: outcome.retryBudgetRemaining,
      retry_after_ms: retryAfters.length === 0 ? null : Math.min(...retryAfters),
      timed_out: outcome.timedOut,
    },
    search_coalescing: {
      role: s.shared.role,
      waiters: s.shared.waiters,
      ...s.coalescer.snapshot(),
    },
    duration_ms: Date.now() - s.started,
  }
}

/** The search's {@link ToolResult}: results in text or JSON, or a typed failure when it failed. */
export function searchAnswer(s: FinishedSearch): ToolResult {
  const outcome = s.shared.value
  const metadata = searchMetadata(s)
  if (outcome.status === 'failed') {
    const envelope = envelopeOf(outcome)
    const output =
      s.args.format === 'json'
        ? JSON.stringify({ error: envelope }, null, 2)
        : renderFailure(envelope)
    return toolFailure('web_search', output, envelope, metadata)
  }
  const results = outcome.set.results.slice(0, s.limit)
  const output =
    s.args.format === 'json' ? renderJson(results) : renderText(s.query, outcome, results)
  return toolSuccess('web_search', output, metadata)
}
