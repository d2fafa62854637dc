import { IsoagentError } from '../../errors.ts'

/** Retry policy of one step (`retry` of `schedule_step`). */
export interface StepRetry {
  max_attempts: number
  delay_ms: number
  on_exhausted: 'fail_run' | 'continue_workflow'
}

/** What every journal event carries: its place in the run's journal and when it was written. */
export interface WorkflowEventBase {
  /** 1, 2, 3, … contiguous within a run. */
  sequence: number
  /** ISO time of the append. */
  at: string
}

/** One event of a run's append-only journal. */
export type WorkflowEvent = WorkflowEventBase &
  (
    | {
        type: 'run_created'
        run_id: string
        source_hash: string
        input: unknown
        /** The script, so a later drive (`session.workflow(id).drive()`) can resume the run. */
        source?: string
      }
    | {
        type: 'step_scheduled'
        step_id: string
        step_name: string
        input: unknown
        /** SHA-256 of `{run_id, step_id, step_name, input}`. */
        identity: string
        retry: StepRetry
      }
    | { type: 'step_started'; step_id: string; attempt: number }
    | { type: 'step_completed'; step_id: string; attempt: number; output: unknown }
    | { type: 'step_failed'; step_id: string; attempt: number; error: string; exhausted: boolean }
    | { type: 'run_completed'; output: unknown }
    | { type: 'run_failed'; error: string }
    | { type: 'run_cancelled'; reason: string }
    | { type: 'run_timed_out'; timeout_ms: number }
  )

/** An event before the store gives it its sequence and time. */
export type NewWorkflowEvent = WorkflowEvent extends infer E
  ? E extends WorkflowEvent
    ? Omit<E, 'sequence' | 'at'>
    : never
  : never

/** Event types after which nothing more may be appended. */
export const TERMINAL_EVENTS: ReadonlySet<WorkflowEvent['type']> = new Set([
  'run_completed',
  'run_failed',
  'run_cancelled',
  'run_timed_out',
])

/**
 * Where `dynamic_workflow` keeps each run's journal. A store appends events atomically (all of
 * one call or none), numbers them from 1 without gaps, refuses anything after a terminal event,
 * and refuses an append made against a stale view (`afterSequence` not the run's last
 * sequence: `version_conflict`), so two drivers of one run cannot interleave.
 */
export interface WorkflowStore {
  /**
   * Append `events` after sequence `afterSequence` (0 for a new run); returns them as stored.
   * Throws `IsoagentError` `version_conflict` when the run's last sequence differs, and
   * `invalid_argument` after a terminal event.
   */
  append(
    runId: string,
    afterSequence: number,
    events: readonly NewWorkflowEvent[],
  ): Promise<WorkflowEvent[]>
  /** The run's events in order (empty for an unknown run). */
  history(runId: string): Promise<WorkflowEvent[]>
  /** Ids of the runs this store holds. */
  list(): Promise<string[]>
}

/** Number `events` after `existing`, checking the store's rules; throws as {@link WorkflowStore.append}. */
export function sequenceEvents(
  runId: string,
  existing: readonly WorkflowEvent[],
  afterSequence: number,
  events: readonly NewWorkflowEvent[],
): WorkflowEvent[] {
  const last = existing.at(-1)
  const lastSequence = last?.sequence ?? 0
  if (lastSequence !== afterSequence)
    throw new IsoagentError(
      'version_conflict',
      `workflow ${runId} is at sequence ${lastSequence}, not ${afterSequence}`,
      { data: { path: runId, expected: afterSequence, actual: lastSequence } },
    )
  if (last !== undefined && TERMINAL_EVENTS.has(last.type))
    throw new IsoagentError('invalid_argument', `workflow ${runId} has ended (${last.type})`)
  const at = new Date().toISOString()
  const out: WorkflowEvent[] = []
  for (const [i, event] of events.entries()) {
    if (i > 0 && TERMINAL_EVENTS.has(events[i - 1]!.type))
      throw new IsoagentError('invalid_argument', 'no event may follow a terminal event')
    out.push({ ...event, sequence: lastSequence + i + 1, at } as WorkflowEvent)
  }
  return out
}

/** A {@link WorkflowStore} in memory (lost with the process). */
export function memoryWorkflowStore(): WorkflowStore {
  const runs = new Map<string, WorkflowEvent[]>()
  return {
    async append(runId, afterSequence, events) {
      const existing = runs.get(runId) ?? []
      const stored = sequenceEvents(runId, existing, afterSequence, events)
      runs.set(runId, [...existing, ...structuredClone(stored)])
      return stored
    },
    async history(runId) {
      return structuredClone(runs.get(runId) ?? [])
    },
    async list() {
      return [...runs.keys()]
    },
  }
}
