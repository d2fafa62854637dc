import type { StepRetry } from './workflow-store.ts'

/** A step a command schedules. */
export interface ScheduledStep {
  step_id: string
  step_name: string
  input: unknown
  retry: StepRetry
}

/** The one command a workflow script returns per replay. */
export type WorkflowCommand =
  | { type: 'complete'; output: unknown }
  | { type: 'fail'; error: string }
  | { type: 'schedule_steps'; steps: ScheduledStep[] }
  | { type: 'wait_until'; wait_id: string; resume_at: string }

/** Most steps one command may schedule. */
export const MAX_STEPS_PER_COMMAND = 1000
const STEP_ID = /^[A-Za-z0-9_.:-]{1,128}$/
const DEFAULT_RETRY: StepRetry = { max_attempts: 3, delay_ms: 0, on_exhausted: 'fail_run' }

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string }

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function parseRetry(raw: unknown): Parsed<StepRetry> {
  if (raw === undefined) return { ok: true, value: { ...DEFAULT_RETRY } }
  if (!isObject(raw)) return { ok: false, error: 'retry must be an object' }
  const max = raw.max_attempts ?? DEFAULT_RETRY.max_attempts
  const delay = raw.delay_ms ?? DEFAULT_RETRY.delay_ms
  const exhausted = raw.on_exhausted ?? DEFAULT_RETRY.on_exhausted
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > 100)
    return { ok: false, error: 'retry.max_attempts must be an integer 1..100' }
  if (typeof delay !== 'number' || !Number.isInteger(delay) || delay < 0 || delay > 600_000)
    return { ok: false, error: 'retry.delay_ms must be an integer 0..600000' }
  if (exhausted !== 'fail_run' && exhausted !== 'continue_workflow')
    return { ok: false, error: 'retry.on_exhausted must be fail_run or continue_workflow' }
  return { ok: true, value: { max_attempts: max, delay_ms: delay, on_exhausted: exhausted } }
}

function parseStep(raw: unknown): Parsed<ScheduledStep> {
  if (!isObject(raw)) return { ok: false, error: 'a step must be an object' }
  if (typeof raw.step_id !== 'string' || !STEP_ID.test(raw.step_id))
    return { ok: false, error: 'step_id must match [A-Za-z0-9_.:-]{1,128}' }
  if (typeof raw.step_name !== 'string' || raw.step_name === '' || raw.step_name.length > 128)
    return { ok: false, error: `step ${raw.step_id}: step_name must be a non-empty string` }
  const retry = parseRetry(raw.retry)
  if (!retry.ok) return { ok: false, error: `step ${raw.step_id}: ${retry.error}` }
  return {
    ok: true,
    value: {
      step_id: raw.step_id,
      step_name: raw.step_name,
      input: raw.input ?? null,
      retry: retry.value,
    },
  }
}

function parseSteps(list: unknown): Parsed<ScheduledStep[]> {
  if (!Array.isArray(list) || list.length === 0)
    return { ok: false, error: 'schedule_steps needs a non-empty steps array' }
  if (list.length > MAX_STEPS_PER_COMMAND)
    return { ok: false, error: `schedule_steps takes at most ${MAX_STEPS_PER_COMMAND} steps` }
  const steps: ScheduledStep[] = []
  const seen = new Set<string>()
  for (const raw of list) {
    const step = parseStep(raw)
    if (!step.ok) return step
    if (seen.has(step.value.step_id))
      return { ok: false, error: `step_id ${step.value.step_id} appears twice in one command` }
    seen.add(step.value.step_id)
    steps.push(step.value)
  }
  return { ok: true, value: steps }
}

/** Check a script's return value as a command (`schedule_step` becomes one-step `schedule_steps`). */
export function parseCommand(raw: unknown): Parsed<WorkflowCommand> {
  if (!isObject(raw) || typeof raw.type !== 'string')
    return { ok: false, error: 'the workflow script must return a command object with a type' }
  switch (raw.type) {
    case 'complete':
      return { ok: true, value: { type: 'complete', output: raw.output ?? null } }
    case 'fail':
      return {
        ok: true,
        value: {
          type: 'fail',
          error: typeof raw.error === 'string' ? raw.error : JSON.stringify(raw.error ?? 'failed'),
        },
      }
    case 'schedule_step': {
      const steps = parseSteps([raw])
      return steps.ok ? { ok: true, value: { type: 'schedule_steps', steps: steps.value } } : steps
    }
    case 'schedule_steps': {
      const steps = parseSteps(raw.steps)
      return steps.ok ? { ok: true, value: { type: 'schedule_steps', steps: steps.value } } : steps
    }
    case 'wait_until':
      if (typeof raw.wait_id !== 'string' || typeof raw.resume_at !== 'string')
        return { ok: false, error: 'wait_until needs wait_id and resume_at strings' }
      return {
        ok: true,
        value: { type: 'wait_until', wait_id: raw.wait_id, resume_at: raw.resume_at },
      }
    default:
      return { ok: false, error: `unknown command type ${JSON.stringify(raw.type)}` }
  }
}
