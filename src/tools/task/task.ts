import { eventArgs } from '../../kernel/event-args.ts'
import { Validator } from '@cfworker/json-schema'
import { runAgentLoop } from '../../agent/agent-loop.ts'
import { describeError, errorKindOf } from '../../kernel/error-kind.ts'
import type { JsonSchema, ToolContext, ToolSpec } from '../../kernel/tool-spec.ts'
import type { ModelMessage, ModelUsage } from '../../llm/language-model.ts'
import { toolFailure, toolSuccess, type ToolErrorKind, type ToolResult } from '../../tool-result.ts'
import { profileAllows, profileSystem, TASK_AGENTS, type TaskAgent } from './profiles.ts'
import type { TaskHost } from './task-host.ts'
import { MAX_SCHEMA_BYTES as OUTPUT_SCHEMA_MAX_BYTES } from '../generate-object/object-schema.ts'
import { checkOutputSchema, structuredAnswer } from './task-output.ts'

/** Bounds of the `task` tool. */
export const TASK_LIMITS = {
  maxTasks: 32,
  /** Sub-agents running at once. */
  maxConcurrency: 8,
  defaultMaxSteps: 20,
  maxSteps: 100,
  maxPromptChars: 100_000,
  maxDescriptionChars: 500,
} as const

/** One item of `task`'s `tasks`. */
export interface TaskItem {
  agent: TaskAgent
  description: string
  prompt: string
  max_steps?: number
  output_schema?: JsonSchema
  background?: boolean
}

/** The arguments of `task` (and of `parallel_task`). */
export interface TaskArgs {
  tasks: TaskItem[]
  allow_partial_failure?: boolean
  min_success_count?: number
}

/** What one sub-agent ended with, as `metadata.results[i]` holds it. */
export interface TaskItemOutcome {
  index: number
  agent: TaskAgent
  description: string
  status: 'completed' | 'failed' | 'cancelled'
  text: string
  steps: number
  usage: ModelUsage
  object?: unknown
  errorKind?: ToolErrorKind
  error?: string
}

const PARAMETERS: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['tasks'],
  properties: {
    tasks: {
      type: 'array',
      minItems: 1,
      maxItems: TASK_LIMITS.maxTasks,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['agent', 'description', 'prompt'],
        properties: {
          agent: {
            type: 'string',
            enum: [...TASK_AGENTS],
            description:
              'explore: read-only tools; verification: read-only tools plus bash/git to run checks; general: every tool.',
          },
          description: {
            type: 'string',
            minLength: 1,
            maxLength: TASK_LIMITS.maxDescriptionChars,
            description: 'A short title of the task (3-10 words).',
          },
          prompt: {
            type: 'string',
            minLength: 1,
            maxLength: TASK_LIMITS.maxPromptChars,
            description: 'Everything the sub-agent needs to know: it sees nothing else.',
          },
          max_steps: {
            type: 'integer',
            minimum: 1,
            maximum: TASK_LIMITS.maxSteps,
            description: `Most model requests of the sub-agent (default ${TASK_LIMITS.defaultMaxSteps}).`,
          },
          output_schema: {
            type: 'object',
            description: `A JSON Schema (<= ${OUTPUT_SCHEMA_MAX_BYTES} bytes) the sub-agent's answer must match; it is returned as metadata.results[i].object.`,
          },
          background: {
            type: 'boolean',
            description:
              'Start the single task in the background and return its id at once (only with one task).',
          },
        },
      },
    },
    allow_partial_failure: {
      type: 'boolean',
      description:
        'Succeed when at least min_success_count tasks succeed (default false: any failure fails the call and stops the rest).',
    },
    min_success_count: {
      type: 'integer',
      minimum: 1,
      maximum: TASK_LIMITS.maxTasks,
      description: 'With allow_partial_failure: how many tasks must succeed (1..n, default 1).',
    },
  },
}

const DESCRIPTION =
  'Run 1-32 focused sub-agents on this workspace, each with its own prompt and a restricted tool set ' +
  '(explore: read-only; verification: read-only plus bash/git; general: all tools). Independent tasks ' +
  "(none of them general) run concurrently. Returns each sub-agent's final answer; with output_schema, a " +
  'validated object. Sub-agents cannot start tasks.'

const schemaValidator = new Validator(
  PARAMETERS as ConstructorParameters<typeof Validator>[0],
  '2020-12',
  false,
)

/** Check `task` arguments: the schema, then the rules between fields. */
export function validateTaskArgs(input: unknown): string | undefined {
  const result = schemaValidator.validate(input)
  if (!result.valid) {
    const e = result.errors[result.errors.length - 1]
    return e ? `${e.instanceLocation.replace(/^#/, '') || 'arguments'}: ${e.error}` : 'invalid'
  }
  const args = input as TaskArgs
  const n = args.tasks.length
  if (args.min_success_count !== undefined) {
    if (args.allow_partial_failure !== true)
      return 'min_success_count is only allowed with allow_partial_failure: true'
    if (args.min_success_count > n)
      return `min_success_count must be in 1..${n} (the number of tasks)`
  }
  if (n > 1 && args.tasks.some((t) => t.background === true))
    return 'background is only allowed for a single task'
  for (const [i, t] of args.tasks.entries()) {
    if (t.output_schema === undefined) continue
    try {
      checkOutputSchema(t.output_schema)
    } catch (error) {
      return `/tasks/${i}/output_schema: ${describeError(error)}`
    }
  }
  return undefined
}

/** Run one sub-agent to its end; never throws. */
async function runItem(
  host: TaskHost,
  context: ToolContext,
  item: TaskItem,
  index: number,
  signal: AbortSignal,
): Promise<TaskItemOutcome> {
  const tools = host.tools().filter((t) => profileAllows(item.agent, t))
  const allowed = new Set(tools.map((t) => t.name))
  const messages: ModelMessage[] = [{ role: 'user', content: item.prompt }]
  const label = `[${index}:${item.agent}]`
  const base = { index, agent: item.agent, description: item.description }
  let steps = 0
  const usage: ModelUsage = { inputTokens: 0, outputTokens: 0 }
  try {
    const run = await runAgentLoop({
      model: host.model,
      tools: tools.map((t) => ({
        name: t.name,
        description: t.description,
        parameters: structuredClone(t.parameters),
      })),
      allowed,
      invoke: (name, args, o) => context.invoke(name, args, { signal: o.signal }),
      scheduling: (name) => context.scheduling(name),
      eventArgs: (name, args) => {
        const tool = tools.find((t) => t.name === name)
        return tool === undefined ? args : eventArgs(tool, args)
      },
      messages,
      system: profileSystem(item.agent, item.description),
      maxSteps: item.max_steps ?? TASK_LIMITS.defaultMaxSteps,
      signal,
      emit: (event) => {
        if (event.type === 'tool_call')
          context.emitOutput(
            `${label} ${event.toolName} ${JSON.stringify(event.args).slice(0, 200)}\n`,
          )
        else if (event.type === 'step_end') steps = event.step
      },
    })
    usage.inputTokens = run.usage.inputTokens
    usage.outputTokens = run.usage.outputTokens
    if (run.finishReason === 'max_steps') {
      const message = `stopped after ${run.steps.length} steps (max_steps) without a final answer`
      return {
        ...base,
        status: 'failed',
        text: run.text,
        steps,
        usage,
        errorKind: { type: 'timeout', op: 'max_steps', duration_ms: 0 },
        error: message,
      }
    }
    let object: unknown
    if (item.output_schema !== undefined) {
      const answer = await structuredAnswer(context, item, run.text, item.output_schema, signal)
      object = answer.object
      usage.inputTokens += answer.usage.inputTokens
      usage.outputTokens += answer.usage.outputTokens
    }
    context.emitOutput(`${label} done after ${steps} steps\n`)
    return {
      ...base,
      status: 'completed',
      text: run.text,
      steps,
      usage,
      ...(item.output_schema !== undefined ? { object } : {}),
    }
  } catch (error) {
    const kind = signal.aborted
      ? { type: 'cancelled' as const, op: 'task' }
      : errorKindOf(error, 'task')
    context.emitOutput(`${label} ${kind.type}\n`)
    return {
      ...base,
      status: kind.type === 'cancelled' ? 'cancelled' : 'failed',
      text: '',
      steps,
      usage,
      errorKind: kind,
      error: signal.aborted ? 'cancelled' : describeError(error),
    }
  }
}

/** Run every item under the partial-failure rules and fold the outcomes into one result. */
async function runTasks(
  host: TaskHost,
  name: string,
  args: TaskArgs,
  context: ToolContext,
  outer: AbortSignal,
): Promise<ToolResult> {
  const items = args.tasks
  const n = items.length
  const partial = args.allow_partial_failure === true
  const stop = new AbortController()
  const onOuter = () => stop.abort(outer.reason)
  if (outer.aborted) onOuter()
  outer.addEventListener('abort', onOuter, { once: true })
  const concurrent = items.every((t) => t.agent !== 'general')
  const width = concurrent ? Math.min(TASK_LIMITS.maxConcurrency, n) : 1
  const outcomes: TaskItemOutcome[] = new Array(n)
  let next = 0
  const worker = async () => {
    while (next < n) {
      const i = next++
      const outcome = await runItem(host, context, items[i]!, i, stop.signal)
      outcomes[i] = outcome
      // Without partial failure the first failure stops the others (they settle as cancelled).
      if (!partial && outcome.status !== 'completed') stop.abort()
    }
  }
  try {
    await Promise.all(Array.from({ length: width }, worker))
  } finally {
    outer.removeEventListener('abort', onOuter)
  }
  const failed = outcomes.filter((o) => o.status !== 'completed')
  const succeeded = n - failed.length
  const metadata = {
    status: failed.length === 0 ? 'complete' : succeeded === 0 ? 'failed' : 'partial_failure',
    total: n,
    succeeded,
    failed: failed.length,
    failed_indices: failed.map((o) => o.index),
    concurrent,
    max_concurrency: width,
    results: outcomes,
  }
  const output = outcomes
    .map(
      (o) =>
        `=== [${o.index}] ${o.description} · ${o.agent} (${o.status}, ${o.steps} steps) ===\n` +
        (o.status === 'completed'
          ? o.object !== undefined
            ? JSON.stringify(o.object, null, 2)
            : o.text
          : `${o.errorKind?.type ?? 'failed'}: ${o.error ?? ''}`),
    )
    .join('\n')
  if (outer.aborted) return toolFailure(name, output, { type: 'cancelled', op: name }, metadata)
  const required = partial ? (args.min_success_count ?? 1) : n
  if (succeeded >= required) return toolSuccess(name, output, metadata)
  if (n === 1 && failed[0]?.errorKind !== undefined)
    return toolFailure(name, output, failed[0].errorKind, metadata)
  return toolFailure(
    name,
    output,
    { type: 'partial_failure', failed: failed.length, total: n },
    metadata,
  )
}

/** Default deadline of a `task` call (30 min): sub-agents take many model turns. */
export const TASK_TIMEOUT_MS = 1_800_000

/**
 * The `task` tool over a session's model and tools (and, `hidden`, its `parallel_task` alias).
 * `background: true` (one task) starts the sub-agent in the session's background tasks and
 * answers at once with `metadata.task_id`; the host reads the result with
 * `session.waitForTask(id)`.
 */
export function createTaskTool(host: TaskHost, name = 'task', hidden = false): ToolSpec<TaskArgs> {
  return {
    name,
    description: DESCRIPTION,
    parameters: structuredClone(PARAMETERS),
    ...(hidden ? { hidden: true } : {}),
    pathArguments: [],
    timeoutMs: TASK_TIMEOUT_MS,
    nesting: { runsAgents: true },
    available: () => true,
    scheduling: {
      read_only: false,
      idempotent: false,
      resumable: false,
      cancellation_safe: true,
      supports_pagination: false,
      max_parallelism: 4,
      output_kind: 'text',
    },
    validate: validateTaskArgs,
    async run(args, context) {
      const first = args.tasks[0]!
      if (args.tasks.length === 1 && first.background === true) {
        const id = host.background.start(
          { description: first.description, agent: first.agent },
          (signal) => runTasks(host, name, args, context, signal),
        )
        return toolSuccess(
          name,
          `started background task ${id} (${first.agent}: ${first.description}); the host collects its result`,
          { task_id: id, status: 'running', background: true },
        )
      }
      return runTasks(host, name, args, context, context.signal)
    },
  }
}
