import { IsoagentError } from '../../errors.ts'
import type { ToolContext, ToolSpec } from '../../kernel/tool-spec.ts'
import { utf8Length } from '../../text/bytes.ts'
import { toolFailure, toolSuccess, type ToolResult } from '../../tool-result.ts'
import { defaultProgramRunner, type ProgramRunner } from '../program/program-runner.ts'
import { defaultQuickJsLoader, type QuickJsLoader } from '../program/quickjs-loader.ts'
import type { ProgramOutcome } from '../program/run-program.ts'
import { driveRun, type DriveOutcome, type ScriptOutcome } from './run-workflow.ts'
import { canonicalJson, foldRun, sha256Hex } from './workflow-state.ts'
import type { WorkflowEvent, WorkflowStore } from './workflow-store.ts'

/** Bounds and defaults of `dynamic_workflow`. */
export const WORKFLOW_LIMITS = {
  inputBytes: 131_072,
  sourceBytes: 262_144,
  timeoutMs: { default: 300_000, max: 3_600_000 },
  scriptTimeoutMs: 30_000,
  maxToolCalls: { default: 20, max: 10_000 },
  maxOutputBytes: { default: 65_536, max: 1_048_576 },
  maxConcurrentGenerations: { default: 1, min: 1, max: 4 },
  maxConcurrentSteps: { default: 4, min: 1, max: 32 },
} as const

/** Tools a workflow script may not call unless `allowed_tools` names them (and never these two). */
export const DEFAULT_EXCLUDED_TOOLS: readonly string[] = [
  'program',
  'dynamic_workflow',
  'parallel_task',
]

/** Arguments of `dynamic_workflow`. */
export interface DynamicWorkflowArgs {
  source: string
  input?: Record<string, unknown>
  run_id?: string
  allowed_tools?: string[]
  limits?: {
    timeoutMs?: number
    maxToolCalls?: number
    maxOutputBytes?: number
    maxConcurrentGenerations?: number
    maxConcurrentSteps?: number
  }
}

const int = (min: number, max: number) => ({ type: 'integer', minimum: min, maximum: max })

const PARAMETERS = {
  type: 'object',
  additionalProperties: false,
  required: ['source'],
  properties: {
    source: {
      type: 'string',
      minLength: 1,
      maxLength: WORKFLOW_LIMITS.sourceBytes,
      description:
        'QuickJS module `export default async function run(ctx, inputs)`: for inputs.kind "workflow" return one command, for "step" the step output.',
    },
    input: { type: 'object', description: 'The run input (JSON, at most 128 KiB).' },
    run_id: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]+$',
      maxLength: 128,
      description: 'Run id (default a UUID); the same id, source and input resumes the run.',
    },
    allowed_tools: {
      type: 'array',
      maxItems: 64,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: 128 },
      description:
        'Tools the script may call (default: all but program, dynamic_workflow, parallel_task).',
    },
    limits: {
      type: 'object',
      additionalProperties: false,
      properties: {
        timeoutMs: int(1, WORKFLOW_LIMITS.timeoutMs.max),
        maxToolCalls: int(0, WORKFLOW_LIMITS.maxToolCalls.max),
        maxOutputBytes: int(1, WORKFLOW_LIMITS.maxOutputBytes.max),
        maxConcurrentGenerations: int(1, 4),
        maxConcurrentSteps: int(1, 32),
      },
    },
  },
}

const DESCRIPTION =
  'Run a journaled, resumable workflow: a QuickJS script `export default async function run(ctx, inputs)`. ' +
  'Called with {kind:"workflow", run_id, history, step_outputs, step_failures, input} it returns one command: ' +
  '{type:"complete", output} | {type:"fail", error} | {type:"schedule_step", step_id, step_name, input, retry?} | ' +
  '{type:"schedule_steps", steps} | {type:"wait_until", wait_id, resume_at}. Steps named "task" call the task tool, ' +
  '"generate_object" the generate_object tool; any other name calls the script with {kind:"step", run_id, step_id, ' +
  'step_name, input} and its return value is the output. Completed steps are journaled and never re-run; the same ' +
  'run_id, source and input resumes a run. retry: {max_attempts 3, delay_ms 0, on_exhausted fail_run|continue_workflow}.'

/** Check arguments beyond the schema (returns a message, or undefined). */
export function checkWorkflowArgs(raw: unknown): string | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return 'arguments must be an object'
  const args = raw as Record<string, unknown>
  for (const key of Object.keys(args))
    if (!(key in PARAMETERS.properties)) return `unknown argument ${key}`
  if (typeof args.source !== 'string' || args.source === '')
    return 'source must be a non-empty string'
  if (utf8Length(args.source) > WORKFLOW_LIMITS.sourceBytes) return 'source is over 256 KiB'
  if (args.input !== undefined) {
    if (typeof args.input !== 'object' || args.input === null || Array.isArray(args.input))
      return 'input must be an object'
    const size = utf8Length(JSON.stringify(args.input))
    if (size > WORKFLOW_LIMITS.inputBytes)
      return `input is ${size} bytes of JSON; at most ${WORKFLOW_LIMITS.inputBytes}`
  }
  if (
    args.run_id !== undefined &&
    (typeof args.run_id !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(args.run_id))
  )
    return 'run_id must match [A-Za-z0-9_-]+ (at most 128 characters)'
  if (args.allowed_tools !== undefined) {
    const tools = args.allowed_tools
    if (
      !Array.isArray(tools) ||
      tools.length > 64 ||
      tools.some((t) => typeof t !== 'string' || t === '')
    )
      return 'allowed_tools must be an array of at most 64 tool names'
    if (tools.includes('program') || tools.includes('dynamic_workflow'))
      return 'allowed_tools cannot name program or dynamic_workflow'
  }
  return checkLimits(args.limits)
}

function checkLimits(raw: unknown): string | undefined {
  if (raw === undefined) return undefined
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return 'limits must be an object'
  const bounds: Record<string, [number, number]> = {
    timeoutMs: [1, WORKFLOW_LIMITS.timeoutMs.max],
    maxToolCalls: [0, WORKFLOW_LIMITS.maxToolCalls.max],
    maxOutputBytes: [1, WORKFLOW_LIMITS.maxOutputBytes.max],
    maxConcurrentGenerations: [1, 4],
    maxConcurrentSteps: [1, 32],
  }
  for (const [key, value] of Object.entries(raw)) {
    const b = bounds[key]
    if (b === undefined) return `unknown limit ${key}`
    if (typeof value !== 'number' || !Number.isInteger(value) || value < b[0] || value > b[1])
      return `limits.${key} must be an integer ${b[0]}..${b[1]}`
  }
  return undefined
}

/** Options of {@link createDynamicWorkflowTool}. */
export interface DynamicWorkflowOptions {
  store: WorkflowStore
  loader?: QuickJsLoader
  runner?: ProgramRunner
  /** Runs being driven now, by id, with what cancels each (shared with `session.workflow`). */
  live?: Map<string, AbortController>
  /** Each journal event as it is appended (the session's stream). */
  onEvent?(runId: string, event: WorkflowEvent): void
}

function programError(outcome: ProgramOutcome): string {
  switch (outcome.status) {
    case 'ok':
      return ''
    case 'error':
      return `${outcome.errorName}: ${outcome.message}`
    case 'limit':
      return `${outcome.limit} limit: ${outcome.message}`
    case 'cancelled':
      return 'cancelled'
  }
}

function scriptCaller(
  args: DynamicWorkflowArgs,
  options: DynamicWorkflowOptions,
  context: ToolContext,
) {
  const allowed = args.allowed_tools === undefined ? undefined : new Set(args.allowed_tools)
  const program = {
    source: args.source,
    filename: 'workflow.js',
    isModule: /(^|[\n;}])\s*export\s/.test(args.source),
  }
  return async (payload: unknown, signal: AbortSignal): Promise<ScriptOutcome> => {
    const ended = new AbortController()
    try {
      // A runner on this very thread yields to the event loop before each script (see
      // `inlineProgramRunner`), so a cancel of this run is served between scripts.
      const runner = options.runner ?? defaultProgramRunner()
      const outcome = await runner.run(
        options.loader ?? defaultQuickJsLoader(),
        program,
        JSON.stringify(payload),
        {
          timeoutMs: Math.min(
            args.limits?.timeoutMs ?? WORKFLOW_LIMITS.scriptTimeoutMs,
            WORKFLOW_LIMITS.scriptTimeoutMs,
          ),
          maxToolCalls: args.limits?.maxToolCalls ?? WORKFLOW_LIMITS.maxToolCalls.default,
          maxOutputBytes: args.limits?.maxOutputBytes ?? WORKFLOW_LIMITS.maxOutputBytes.default,
        },
        {
          signal,
          callTool: async (name, toolArgs) => {
            const refused =
              allowed === undefined
                ? DEFAULT_EXCLUDED_TOOLS.includes(name)
                : !allowed.has(name) || name === 'program' || name === 'dynamic_workflow'
            if (refused) {
              const message = `${name} is not in this workflow's allowed_tools`
              return toolFailure(name, message, { type: 'permission_denied', message })
            }
            return context.invoke(name, toolArgs, {
              signal: AbortSignal.any([signal, ended.signal]),
            })
          },
        },
      )
      if (outcome.status !== 'ok') return { ok: false, error: programError(outcome) }
      return {
        ok: true,
        value: outcome.valueJson === undefined ? null : JSON.parse(outcome.valueJson),
      }
    } finally {
      ended.abort()
    }
  }
}

/** Create the run, or check that an existing run has this source and input. */
async function openRun(
  store: WorkflowStore,
  runId: string,
  source: string,
  sourceHash: string,
  input: Record<string, unknown>,
): Promise<void> {
  const history = await store.history(runId)
  if (history.length === 0) {
    await store.append(runId, 0, [
      { type: 'run_created', run_id: runId, source_hash: sourceHash, input, source },
    ])
    return
  }
  const state = foldRun(runId, history)
  if (state.sourceHash !== sourceHash)
    throw new IsoagentError(
      'invalid_argument',
      `run ${runId} exists with another source (source hash ${state.sourceHash})`,
    )
  if (canonicalJson(state.input) !== canonicalJson(input))
    throw new IsoagentError('invalid_argument', `run ${runId} exists with another input`)
}

function shape(
  outcome: DriveOutcome,
  runId: string,
  sourceHash: string,
  maxSteps: number,
  timeoutMs: number,
): ToolResult {
  const state = outcome.state
  const metadata = {
    dynamic_workflow: {
      run_id: runId,
      status: outcome.status,
      last_sequence: state.lastSequence,
      source_hash: sourceHash,
      steps: [...state.steps.values()].map((s) => ({
        step_id: s.step_id,
        step_name: s.step_name,
        status: s.status,
        attempts: s.attempts,
      })),
      admission: { maxConcurrentSteps: maxSteps, peakActiveSteps: outcome.peakActiveSteps },
      ...(outcome.wait !== undefined ? { wait: outcome.wait } : {}),
    },
  }
  switch (outcome.status) {
    case 'completed':
      return toolSuccess(
        'dynamic_workflow',
        JSON.stringify(outcome.output ?? null, null, 2),
        metadata,
      )
    case 'suspended':
      return toolFailure(
        'dynamic_workflow',
        `workflow ${runId} is suspended until ${outcome.wait?.resume_at} (wait ${outcome.wait?.wait_id}); call again with the same run_id, source and input to resume`,
        { type: 'unsupported', message: 'wait_until suspends the run' },
        metadata,
      )
    case 'cancelled':
      return toolFailure(
        'dynamic_workflow',
        `workflow ${runId} was cancelled: ${outcome.error}`,
        { type: 'cancelled', op: 'dynamic_workflow' },
        metadata,
      )
    case 'timed_out':
      return toolFailure(
        'dynamic_workflow',
        `workflow ${runId} timed out`,
        { type: 'timeout', op: 'dynamic_workflow', duration_ms: timeoutMs },
        metadata,
      )
    case 'failed': {
      const message = `workflow ${runId} failed: ${outcome.error ?? 'unknown'}`
      return toolFailure(
        'dynamic_workflow',
        message,
        { type: 'invalid_argument', message },
        metadata,
      )
    }
  }
}

/** What a host reaches of a session's `dynamic_workflow`: its store and the runs driven now. */
export interface WorkflowHost {
  store: WorkflowStore
  live: Map<string, AbortController>
}

const HOSTS = new WeakMap<object, WorkflowHost>()

/** The {@link WorkflowHost} of a tool {@link createDynamicWorkflowTool} made, if it is one. */
export function workflowHostOf(tool: object | undefined): WorkflowHost | undefined {
  return tool === undefined ? undefined : HOSTS.get(tool)
}

/** The `dynamic_workflow` tool over `options.store`. */
export function createDynamicWorkflowTool(
  given: DynamicWorkflowOptions,
): ToolSpec<DynamicWorkflowArgs> {
  const options = { ...given, live: given.live ?? new Map<string, AbortController>() }
  const spec: ToolSpec<DynamicWorkflowArgs> = {
    name: 'dynamic_workflow',
    description: DESCRIPTION,
    parameters: PARAMETERS,
    pathArguments: [],
    nesting: { container: true, nonReentrant: true },
    available: () => true,
    scheduling: {
      read_only: false,
      idempotent: true,
      resumable: true,
      cancellation_safe: false,
      supports_pagination: false,
      max_parallelism: 4,
      output_kind: 'json',
    },
    validate: checkWorkflowArgs,
    ownDeadlineMs: (args) => args.limits?.timeoutMs ?? WORKFLOW_LIMITS.timeoutMs.default,
    async run(args, context) {
      const runId = args.run_id ?? crypto.randomUUID()
      const input = args.input ?? {}
      const sourceHash = await sha256Hex(args.source)
      const live = options.live
      if (live.has(runId))
        throw new IsoagentError('invalid_argument', `workflow ${runId} is being driven already`)
      const cancel = new AbortController()
      live.set(runId, cancel)
      try {
        await openRun(options.store, runId, args.source, sourceHash, input)
        return await drive(args, context, options, {
          runId,
          sourceHash,
          signal: AbortSignal.any([context.signal, cancel.signal]),
        })
      } finally {
        live.delete(runId)
      }
    },
  }
  HOSTS.set(spec, { store: options.store, live: options.live })
  return spec
}

async function drive(
  args: DynamicWorkflowArgs,
  context: ToolContext,
  options: DynamicWorkflowOptions,
  run: { runId: string; sourceHash: string; signal: AbortSignal },
): Promise<ToolResult> {
  const { runId, sourceHash } = run
  const maxSteps = args.limits?.maxConcurrentSteps ?? WORKFLOW_LIMITS.maxConcurrentSteps.default
  const timeoutMs = args.limits?.timeoutMs ?? WORKFLOW_LIMITS.timeoutMs.default
  const outcome = await driveRun(
    {
      store: options.store,
      callScript: scriptCaller(args, options, context),
      invoke: (name, toolArgs, signal) => context.invoke(name, toolArgs, { signal }),
      maxConcurrentSteps: maxSteps,
      maxConcurrentGenerations:
        args.limits?.maxConcurrentGenerations ?? WORKFLOW_LIMITS.maxConcurrentGenerations.default,
      timeoutMs,
      signal: run.signal,
      ...(options.onEvent !== undefined
        ? { onEvent: (e: WorkflowEvent) => options.onEvent!(runId, e) }
        : {}),
    },
    runId,
  )
  return shape(outcome, runId, sourceHash, maxSteps, timeoutMs)
}
