import { NOT_HEALTH, type EngineFailureKind } from './engine-failure.ts'

/** State of one engine's breaker. */
export type BreakerState = 'closed' | 'open' | 'half_open'

/** Tuning of {@link CircuitBreaker}; `now` is the clock (ms), injectable for tests. */
export interface BreakerOptions {
  now?: () => number
  /** Consecutive transport/timeout/blocked/garbage failures that open it (default 2). */
  failureThreshold?: number
  /** Consecutive empty answers that open it (default 3). */
  emptyThreshold?: number
  /** First open period without a Retry-After (default 30 s), doubled per re-open. */
  openMs?: number
  /** Longest open period (default 10 min). */
  maxOpenMs?: number
}

/** Failures that open the breaker at once. */
const DECISIVE: ReadonlySet<EngineFailureKind> = new Set(['quota', 'permission', 'rate_limited'])

interface EngineBreaker {
  state: BreakerState
  failures: number
  empties: number
  trips: number
  openUntil: number
  probing: boolean
  retryAfterMs: number | undefined
  lastFailure: EngineFailureKind | undefined
}

/** What {@link CircuitBreaker.snapshot} shows of one engine. */
export interface BreakerSnapshot {
  state: BreakerState
  consecutive_failures: number
  consecutive_empty: number
  trips: number
  open_remaining_ms: number
  retry_after_ms: number | null
  last_failure: EngineFailureKind | null
}

/** Admission of one request by {@link CircuitBreaker.admit}. */
export type Admission = { allowed: true; probe: boolean } | { allowed: false; retryInMs: number }

/**
 * A per-session circuit breaker per engine: closed → open (quota, permission and rate limits at
 * once; transport errors, timeouts, walls and garbage after `failureThreshold` in a row; empty
 * answers after `emptyThreshold` in a row) → half-open once the open period (the engine's
 * `Retry-After` when it sent one) has passed, letting one probe through: a success closes it, a
 * failure opens it again for twice as long.
 */
export class CircuitBreaker {
  private readonly engines = new Map<string, EngineBreaker>()
  private readonly now: () => number
  private readonly failureThreshold: number
  private readonly emptyThreshold: number
  private readonly openMs: number
  private readonly maxOpenMs: number

  constructor(options: BreakerOptions = {}) {
    this.now = options.now ?? (() => Date.now())
    this.failureThreshold = options.failureThreshold ?? 2
    this.emptyThreshold = options.emptyThreshold ?? 3
    this.openMs = options.openMs ?? 30_000
    this.maxOpenMs = options.maxOpenMs ?? 600_000
  }

  private entry(engine: string): EngineBreaker {
    let e = this.engines.get(engine)
    if (e === undefined) {
      e = {
        state: 'closed',
        failures: 0,
        empties: 0,
        trips: 0,
        openUntil: 0,
        probing: false,
        retryAfterMs: undefined,
        lastFailure: undefined,
      }
      this.engines.set(engine, e)
    }
    return e
  }

  private refresh(e: EngineBreaker): void {
    if (e.state === 'open' && this.now() >= e.openUntil) {
      e.state = 'half_open'
      e.probing = false
    }
  }

  state(engine: string): BreakerState {
    const e = this.entry(engine)
    this.refresh(e)
    return e.state
  }

  /** Whether a request to `engine` may go out now (half-open: one probe at a time). */
  admit(engine: string): Admission {
    const e = this.entry(engine)
    this.refresh(e)
    if (e.state === 'closed') return { allowed: true, probe: false }
    if (e.state === 'half_open' && !e.probing) {
      e.probing = true
      return { allowed: true, probe: true }
    }
    return { allowed: false, retryInMs: Math.max(0, e.openUntil - this.now()) }
  }

  /** Record a request's outcome: `success`, or a failure kind (with the engine's Retry-After). */
  record(engine: string, outcome: 'success' | EngineFailureKind, retryAfterMs?: number): void {
    const e = this.entry(engine)
    if (outcome !== 'success' && NOT_HEALTH.has(outcome)) {
      e.probing = false
      return
    }
    if (outcome === 'success') {
      e.state = 'closed'
      e.failures = 0
      e.empties = 0
      e.trips = 0
      e.probing = false
      e.retryAfterMs = undefined
      return
    }
    e.lastFailure = outcome
    if (retryAfterMs !== undefined) e.retryAfterMs = retryAfterMs
    if (outcome === 'empty') e.empties++
    else e.failures++
    const trip =
      e.state === 'half_open' ||
      DECISIVE.has(outcome) ||
      e.failures >= this.failureThreshold ||
      e.empties >= this.emptyThreshold
    if (!trip) return
    e.trips++
    const backoff = Math.min(this.openMs * 2 ** (e.trips - 1), this.maxOpenMs)
    e.state = 'open'
    e.probing = false
    e.openUntil = this.now() + (retryAfterMs ?? backoff)
  }

  snapshot(engine: string): BreakerSnapshot {
    const e = this.entry(engine)
    this.refresh(e)
    return {
      state: e.state,
      consecutive_failures: e.failures,
      consecutive_empty: e.empties,
      trips: e.trips,
      open_remaining_ms: e.state === 'open' ? Math.max(0, e.openUntil - this.now()) : 0,
      retry_after_ms: e.retryAfterMs ?? null,
      last_failure: e.lastFailure ?? null,
    }
  }
}
