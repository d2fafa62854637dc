import { TIER_ORDER, tierOf, type EngineConfig, type EngineTier } from './engine-config.ts'
import { ResultSet } from './merge-results.ts'
import {
  countsMet,
  healthOf,
  missing,
  requirementsFor,
  type RetrievalHealth,
  type RetrievalRequirements,
} from './requirements.ts'
import { runEngine, type EngineEnv, type EngineRun } from './run-engine.ts'

/** One search through the tiers. */
export interface CascadeRequest {
  query: string
  limit: number
  engines: readonly EngineConfig[]
  timeoutMs: number
  signal: AbortSignal
}

/** An engine's entry in the tier record (its results are in the merged list). */
export type EngineRecord = Omit<EngineRun, 'results'> & { results: number }

/** What one tier did and why (the `tiers` metadata). */
export interface TierRecord {
  tier: EngineTier
  decision: 'ran' | 'skipped' | 'not_needed'
  reason: string
  started_at_ms: number
  duration_ms: number
  timeout_ms: number
  engines: EngineRecord[]
  /** What the merged results still missed after this tier (empty: requirements met). */
  missing_after: string[]
}

/** The outcome of the cascade. */
export interface CascadeOutcome {
  set: ResultSet
  runs: EngineRun[]
  tiers: TierRecord[]
  health: RetrievalHealth
  requirements: RetrievalRequirements
  status: 'complete' | 'partial' | 'failed'
  cancelled: boolean
  timedOut: boolean
  retryBudgetRemaining: number
}

function runnable(engine: EngineConfig, env: EngineEnv): boolean {
  return engine.kind !== 'browser' || env.browser !== undefined
}

/**
 * Run the tiers in order (browser → HTTP/RSS → API), each only while the merged results miss
 * the structural requirements (enough usable results from enough domains, no engine error in
 * the tier before). The engines of one tier run concurrently, each tier within its share of
 * what is left of the deadline.
 */
export async function runCascade(request: CascadeRequest, env: EngineEnv): Promise<CascadeOutcome> {
  const started = env.now()
  const deadlineAt = started + request.timeoutMs
  const requirements = requirementsFor(request.limit)
  const set = new ResultSet()
  const runs: EngineRun[] = []
  const tiers: TierRecord[] = []
  let timedOut = false
  let needMore = true
  for (let i = 0; i < TIER_ORDER.length; i++) {
    const tier = TIER_ORDER[i]!
    const engines = request.engines.filter((e) => tierOf(e.kind) === tier)
    if (engines.length === 0) continue
    const record: TierRecord = {
      tier,
      decision: 'ran',
      reason: '',
      started_at_ms: env.now() - started,
      duration_ms: 0,
      timeout_ms: 0,
      engines: [],
      missing_after: [],
    }
    tiers.push(record)
    if (request.signal.aborted || timedOut) {
      record.decision = 'skipped'
      record.reason = request.signal.aborted ? 'cancelled' : 'deadline passed'
      continue
    }
    if (!needMore) {
      record.decision = 'not_needed'
      record.reason = 'requirements met by the tiers before'
      continue
    }
    const left = TIER_ORDER.slice(i).filter((t) =>
      request.engines.some((e) => tierOf(e.kind) === t && runnable(e, env)),
    ).length
    const remaining = Math.max(1, deadlineAt - env.now())
    const share = engines.some((e) => runnable(e, env))
      ? Math.ceil(remaining / Math.max(1, left))
      : remaining
    record.timeout_ms = share
    record.reason =
      tiers.length === 1 || tiers.slice(0, -1).every((t) => t.decision !== 'ran')
        ? 'first tier'
        : `tiers before missed: ${tiers.at(-2)?.missing_after.join(', ') ?? ''}`
    const deadline = new AbortController()
    const timer = setTimeout(() => deadline.abort(new Error('tier deadline')), share)
    const combined = AbortSignal.any([request.signal, deadline.signal])
    const tierStart = env.now()
    let tierRuns: EngineRun[]
    try {
      tierRuns = await Promise.all(
        engines.map((engine) =>
          runEngine(engine, request.query, request.limit, env, {
            caller: request.signal,
            deadline: deadline.signal,
            combined,
            deadlineMs: env.now() + share,
          }),
        ),
      )
    } finally {
      clearTimeout(timer)
    }
    record.duration_ms = env.now() - tierStart
    if (env.now() >= deadlineAt) timedOut = true
    for (const run of tierRuns) {
      runs.push(run)
      set.add(run.engine, run.tier, run.results)
      record.engines.push({ ...run, results: run.results.length })
    }
    const tierErrors = tierRuns.filter(
      (r) => r.outcome === 'failed' || r.failure?.kind === 'circuit_open',
    ).length
    const health = healthOf(set, runs)
    record.missing_after = missing(health, requirements, tierErrors)
    needMore = record.missing_after.length > 0
    if (!tierRuns.some((r) => r.outcome !== 'skipped')) record.decision = 'skipped'
    if (record.decision === 'skipped') record.reason = 'no engine of this tier could run here'
  }
  const health = healthOf(set, runs)
  const met = countsMet(health, requirements)
  return {
    set,
    runs,
    tiers,
    health,
    requirements,
    status:
      !met || request.signal.aborted
        ? 'failed'
        : health.engine_errors === 0
          ? 'complete'
          : 'partial',
    cancelled: request.signal.aborted,
    timedOut,
    retryBudgetRemaining: env.retries.remaining,
  }
}
