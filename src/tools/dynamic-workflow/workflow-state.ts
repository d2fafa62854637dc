import { TERMINAL_EVENTS, type StepRetry, type WorkflowEvent } from './workflow-store.ts'

/** A run's status as its journal tells it (`suspended` is a drive's answer, never journaled). */
export type WorkflowStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'timed_out'

/** One step as the journal tells it. */
export interface StepState {
  step_id: string
  step_name: string
  input: unknown
  identity: string
  retry: StepRetry
  status: 'pending' | 'completed' | 'failed'
  /** Attempts that ended (completed or failed). */
  attempts: number
  output?: unknown
  error?: string
}

/** A run folded from its journal. */
export interface RunState {
  runId: string
  sourceHash: string | undefined
  input: unknown
  status: WorkflowStatus
  lastSequence: number
  steps: Map<string, StepState>
  terminal: WorkflowEvent | undefined
}

const STATUS_OF: Record<string, WorkflowStatus> = {
  run_completed: 'completed',
  run_failed: 'failed',
  run_cancelled: 'cancelled',
  run_timed_out: 'timed_out',
}

function applyStep(steps: Map<string, StepState>, event: WorkflowEvent): void {
  switch (event.type) {
    case 'step_scheduled':
      steps.set(event.step_id, {
        step_id: event.step_id,
        step_name: event.step_name,
        input: event.input,
        identity: event.identity,
        retry: event.retry,
        status: 'pending',
        attempts: 0,
      })
      return
    case 'step_completed': {
      const step = steps.get(event.step_id)
      if (step === undefined) return
      step.status = 'completed'
      step.output = event.output
      step.attempts = event.attempt
      return
    }
    case 'step_failed': {
      const step = steps.get(event.step_id)
      if (step === undefined) return
      step.attempts = event.attempt
      step.error = event.error
      if (event.exhausted) step.status = 'failed'
      return
    }
    default:
      return
  }
}

/** Fold a journal into the run's state. */
export function foldRun(runId: string, history: readonly WorkflowEvent[]): RunState {
  const state: RunState = {
    runId,
    sourceHash: undefined,
    input: undefined,
    status: 'running',
    lastSequence: history.at(-1)?.sequence ?? 0,
    steps: new Map(),
    terminal: undefined,
  }
  for (const event of history) {
    if (event.type === 'run_created') {
      state.sourceHash = event.source_hash
      state.input = event.input
    } else if (TERMINAL_EVENTS.has(event.type)) {
      state.terminal = event
      state.status = STATUS_OF[event.type] ?? 'failed'
    } else applyStep(state.steps, event)
  }
  return state
}

/** `step_outputs` and `step_failures` as the workflow script sees them. */
export function stepViews(state: RunState): {
  step_outputs: Record<string, unknown>
  step_failures: Record<string, { error: string; attempts: number }>
} {
  const step_outputs: Record<string, unknown> = {}
  const step_failures: Record<string, { error: string; attempts: number }> = {}
  for (const step of state.steps.values()) {
    if (step.status === 'completed') step_outputs[step.step_id] = step.output
    else if (step.status === 'failed')
      step_failures[step.step_id] = { error: step.error ?? 'failed', attempts: step.attempts }
  }
  return { step_outputs, step_failures }
}

/** Canonical JSON (object keys sorted) for digests. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value ?? null)
}

/** SHA-256 hex of a string. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

/** A step's identity: the digest of `{run_id, step_id, step_name, input}`. */
export function stepIdentity(
  runId: string,
  stepId: string,
  stepName: string,
  input: unknown,
): Promise<string> {
  return sha256Hex(canonicalJson({ run_id: runId, step_id: stepId, step_name: stepName, input }))
}
