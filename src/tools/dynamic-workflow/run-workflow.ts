import { delay } from '../../event-loop.ts'
import type { ToolResult } from '../../tool-result.ts'
import { parseCommand, type ScheduledStep } from './workflow-command.ts'
import {
  foldRun,
  stepIdentity,
  stepViews,
  type RunState,
  type StepState,
} from './workflow-state.ts'
import type { NewWorkflowEvent, WorkflowEvent, WorkflowStore } from './workflow-store.ts'

/** What one call of the script gave: its returned value, or why it failed. */
export type ScriptOutcome = { ok: true; value: unknown } | { ok: false; error: string }

/** What a drive of a run needs. */
export interface WorkflowRuntime {
  store: WorkflowStore
  /** Call the workflow script (QuickJS) with `payload` as its `inputs`. */
  callScript(payload: unknown, signal: AbortSignal): Promise<ScriptOutcome>
  /** Run a tool (`task`, `generate_object`) for a step. */
  invoke(name: string, args: unknown, signal: AbortSignal): Promise<ToolResult>
  maxConcurrentSteps: number
  maxConcurrentGenerations: number
  /** Wall time of this drive (ms); past it the run ends `run_timed_out`. */
  timeoutMs: number
  signal: AbortSignal
  onEvent?(event: WorkflowEvent): void
}

/** How a drive ended. */
export interface DriveOutcome {
  status: 'completed' | 'failed' | 'cancelled' | 'timed_out' | 'suspended'
  /** The terminal command's output or error; a refusal's reason; the wait of `suspended`. */
  output?: unknown
  error?: string
  /** The command itself was invalid or refused (`invalid_argument`). */
  invalid?: boolean
  wait?: { wait_id: string; resume_at: string }
  state: RunState
  peakActiveSteps: number
}

/** Most replays of the script in one drive. */
export const MAX_REPLAYS = 10_000

/**
 * A counting semaphore whose waits all end when `signal` aborts (one listener for every waiter:
 * a command may leave a thousand steps waiting for a permit).
 */
class Permits {
  private free: number
  private readonly waiting: (() => void)[] = []
  constructor(
    count: number,
    private readonly signal: AbortSignal,
  ) {
    this.free = count
    signal.addEventListener('abort', () => this.waiting.splice(0).forEach((go) => go()), {
      once: true,
    })
  }
  async take(): Promise<boolean> {
    if (this.signal.aborted) return false
    if (this.free > 0) {
      this.free--
      return true
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve))
    return !this.signal.aborted
  }
  give(): void {
    const next = this.waiting.shift()
    if (next !== undefined) next()
    else this.free++
  }
}

/**
 * Appends of one drive, serialised, each after the last sequence this drive wrote. After an
 * append fails (a conflict, or a write whose outcome is unknown: it may have landed) every later
 * append of this drive fails with the same error: its view of the journal is no longer known.
 */
class Journal {
  private chain: Promise<unknown> = Promise.resolve()
  private failed: { error: unknown } | undefined
  constructor(
    private readonly runtime: WorkflowRuntime,
    private readonly runId: string,
    public last: number,
  ) {}
  append(events: NewWorkflowEvent[]): Promise<WorkflowEvent[]> {
    const next = this.chain.then(async () => {
      if (this.failed !== undefined) throw this.failed.error
      let stored: WorkflowEvent[]
      try {
        stored = await this.runtime.store.append(this.runId, this.last, events)
      } catch (error) {
        this.failed = { error }
        throw error
      }
      this.last = stored.at(-1)?.sequence ?? this.last
      for (const e of stored) this.runtime.onEvent?.(e)
      return stored
    })
    this.chain = next.catch(() => undefined)
    return next
  }
}

interface DriveContext {
  runtime: WorkflowRuntime
  runId: string
  journal: Journal
  signal: AbortSignal
  /** Aborted with the error of the first step that throws: the drive's other steps stop. */
  halt: AbortController
  stepPermits: Permits
  generationPermits: Permits
  active: number
  peak: number
  failRun: string | undefined
}

async function executeStep(
  d: DriveContext,
  step: StepState,
  attempt: number,
): Promise<ScriptOutcome> {
  if (step.step_name === 'task' || step.step_name === 'generate_object') {
    const result = await d.runtime.invoke(step.step_name, step.input, d.signal)
    if (result.exitCode !== 0) return { ok: false, error: result.output }
    return { ok: true, value: { output: result.output, metadata: result.metadata ?? {} } }
  }
  return d.runtime.callScript(
    {
      kind: 'step',
      run_id: d.runId,
      step_id: step.step_id,
      step_name: step.step_name,
      input: step.input,
      attempt,
    },
    d.signal,
  )
}

/** Run one step's attempts until it completes, is exhausted, or the drive stops. */
async function runStep(d: DriveContext, step: StepState): Promise<void> {
  for (let attempt = step.attempts + 1; attempt <= step.retry.max_attempts; attempt++) {
    if (attempt > 1) await delay(step.retry.delay_ms, d.signal)
    const generation = step.step_name === 'generate_object'
    // A generation's clock starts only once it holds its permit.
    if (generation && !(await d.generationPermits.take())) return
    if (d.signal.aborted) return
    let outcome: ScriptOutcome
    try {
      await d.journal.append([{ type: 'step_started', step_id: step.step_id, attempt }])
      outcome = await executeStep(d, step, attempt)
    } finally {
      if (generation) d.generationPermits.give()
    }
    if (d.signal.aborted) return
    if (outcome.ok) {
      await d.journal.append([
        { type: 'step_completed', step_id: step.step_id, attempt, output: outcome.value ?? null },
      ])
      return
    }
    const exhausted = attempt >= step.retry.max_attempts
    await d.journal.append([
      { type: 'step_failed', step_id: step.step_id, attempt, error: outcome.error, exhausted },
    ])
    if (exhausted && step.retry.on_exhausted === 'fail_run')
      d.failRun ??= `step ${step.step_id} failed after ${attempt} attempts: ${outcome.error}`
  }
}

/**
 * Run `steps` at once. When one throws (its journal append failed) the others are stopped, and
 * that error is thrown once every step has settled: no step of this drive runs on after it.
 */
async function runSteps(d: DriveContext, steps: StepState[]): Promise<void> {
  await Promise.allSettled(
    steps.map((step) =>
      admitAndRun(d, step).catch((error: unknown) => {
        if (!d.halt.signal.aborted) d.halt.abort(error)
      }),
    ),
  )
  if (d.halt.signal.aborted) throw d.halt.signal.reason
}

async function admitAndRun(d: DriveContext, step: StepState): Promise<void> {
  if (!(await d.stepPermits.take())) return
  d.active++
  d.peak = Math.max(d.peak, d.active)
  try {
    if (d.failRun === undefined) await runStep(d, step)
  } finally {
    d.active--
    d.stepPermits.give()
  }
}

/** The events that schedule `steps`, or the reason they are refused. */
async function scheduleEvents(
  state: RunState,
  steps: ScheduledStep[],
): Promise<{ events: NewWorkflowEvent[] } | { refused: string }> {
  const events: NewWorkflowEvent[] = []
  for (const step of steps) {
    const identity = await stepIdentity(state.runId, step.step_id, step.step_name, step.input)
    const known = state.steps.get(step.step_id)
    if (known !== undefined) {
      if (known.identity !== identity)
        return {
          refused: `step ${step.step_id} is already journaled with another step_name or input`,
        }
      continue
    }
    events.push({ type: 'step_scheduled', ...step, identity })
  }
  return { events }
}

function ended(d: DriveContext, state: RunState, extra: Partial<DriveOutcome> = {}): DriveOutcome {
  const t = state.terminal
  const base: DriveOutcome = {
    status: state.status === 'running' ? 'failed' : state.status,
    state,
    peakActiveSteps: d.peak,
  }
  if (t?.type === 'run_completed') base.output = t.output
  if (t?.type === 'run_failed') base.error = t.error
  if (t?.type === 'run_cancelled') base.error = t.reason
  return { ...base, ...extra }
}

async function finish(
  d: DriveContext,
  event: NewWorkflowEvent,
  extra: Partial<DriveOutcome> = {},
): Promise<DriveOutcome> {
  await d.journal.append([event])
  const state = foldRun(d.runId, await d.runtime.store.history(d.runId))
  return ended(d, state, extra)
}

/** One replay: the script's command for the run as journaled, applied. */
async function replay(
  d: DriveContext,
  state: RunState,
  history: WorkflowEvent[],
): Promise<DriveOutcome | undefined> {
  const views = stepViews(state)
  const called = await d.runtime.callScript(
    { kind: 'workflow', run_id: d.runId, history, ...views, input: state.input },
    d.signal,
  )
  if (d.signal.aborted) return undefined
  if (!called.ok)
    return finish(d, { type: 'run_failed', error: `workflow script failed: ${called.error}` })
  const command = parseCommand(called.value)
  if (!command.ok)
    return finish(
      d,
      { type: 'run_failed', error: `invalid command: ${command.error}` },
      { invalid: true },
    )
  const c = command.value
  if (c.type === 'complete') return finish(d, { type: 'run_completed', output: c.output })
  if (c.type === 'fail') return finish(d, { type: 'run_failed', error: c.error })
  if (c.type === 'wait_until')
    return {
      status: 'suspended',
      wait: { wait_id: c.wait_id, resume_at: c.resume_at },
      state,
      peakActiveSteps: d.peak,
    }
  const scheduled = await scheduleEvents(state, c.steps)
  if ('refused' in scheduled)
    return finish(d, { type: 'run_failed', error: scheduled.refused }, { invalid: true })
  if (scheduled.events.length === 0)
    return finish(
      d,
      {
        type: 'run_failed',
        error: 'the command scheduled only steps already journaled: no progress',
      },
      { invalid: true },
    )
  await d.journal.append(scheduled.events)
  return undefined
}

/**
 * Drive a created run until it ends or suspends: run its pending steps (admitted by
 * `maxConcurrentSteps`, generations by `maxConcurrentGenerations`), then replay the script with
 * the journal and apply its command, and again. Completed steps are never run again, so a drive
 * after a crash resumes where the journal stops.
 */
export async function driveRun(runtime: WorkflowRuntime, runId: string): Promise<DriveOutcome> {
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(), runtime.timeoutMs)
  const halt = new AbortController()
  const signal = AbortSignal.any([runtime.signal, deadline.signal, halt.signal])
  const history0 = await runtime.store.history(runId)
  const d: DriveContext = {
    runtime,
    runId,
    journal: new Journal(runtime, runId, history0.at(-1)?.sequence ?? 0),
    signal,
    halt,
    stepPermits: new Permits(runtime.maxConcurrentSteps, signal),
    generationPermits: new Permits(runtime.maxConcurrentGenerations, signal),
    active: 0,
    peak: 0,
    failRun: undefined,
  }
  try {
    let history = history0
    for (let round = 0; round < MAX_REPLAYS; round++) {
      const state = foldRun(runId, history)
      if (state.terminal !== undefined) return ended(d, state)
      const stopped = await stopIfSignalled(d, runtime)
      if (stopped !== undefined) return stopped
      const pending = [...state.steps.values()].filter((s) => s.status === 'pending')
      if (pending.length > 0) {
        await runSteps(d, pending)
        if (d.failRun !== undefined && !signal.aborted)
          return await finish(d, { type: 'run_failed', error: d.failRun })
      } else {
        const outcome = await replay(d, state, history)
        if (outcome !== undefined) return outcome
      }
      history = await runtime.store.history(runId)
    }
    return await finish(d, { type: 'run_failed', error: `more than ${MAX_REPLAYS} replays` })
  } finally {
    clearTimeout(timer)
  }
}

async function stopIfSignalled(
  d: DriveContext,
  runtime: WorkflowRuntime,
): Promise<DriveOutcome | undefined> {
  if (runtime.signal.aborted)
    return finish(d, {
      type: 'run_cancelled',
      reason: String(runtime.signal.reason ?? 'cancelled'),
    })
  if (d.signal.aborted) return finish(d, { type: 'run_timed_out', timeout_ms: runtime.timeoutMs })
  return undefined
}
