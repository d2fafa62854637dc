import { IsoagentError } from '../../errors.ts'
import { errorKindOf } from '../../kernel/error-kind.ts'
import type { JsonSchema, ToolContext, ToolSpec } from '../../kernel/tool-spec.ts'
import type {
  LanguageModel,
  ModelFinishReason,
  ModelMessage,
  ModelRequest,
  ModelToolCall,
} from '../../llm/language-model.ts'
import { toolFailure, toolSuccess, type ToolResult } from '../../tool-result.ts'
import { parseJsonText, parsePartialJson } from './json-text.ts'
import {
  firstRequest,
  objectRootedIn,
  resolveMode,
  supports,
  type ObjectMode,
  type ObjectTask,
  type RequestedMode,
} from './modes.ts'
import { MAX_SCHEMA_BYTES, checkObjectSchema, type ObjectSchema } from './object-schema.ts'

/** The tool's name. */
export const GENERATE_OBJECT = 'generate_object'

/** Bounds of generate_object's arguments. */
export const GENERATE_OBJECT_LIMITS = {
  maxSchemaBytes: MAX_SCHEMA_BYTES,
  maxSchemaDescriptionBytes: 4096,
  maxSystemBytes: 32 * 1024,
  maxRepairAttempts: 5,
  defaultRepairAttempts: 2,
  minTimeoutMs: 1000,
  maxTimeoutMs: 600_000,
  defaultTimeoutMs: 120_000,
  /** Shortest gap between two `object_partial` deltas. */
  partialIntervalMs: 100,
  defaultSchemaName: 'object',
} as const

/** Arguments of generate_object. */
export interface GenerateObjectArgs {
  schema: JsonSchema
  prompt: string
  schema_name?: string
  schema_description?: string
  system?: string
  mode?: RequestedMode
  max_repair_attempts?: number
  include_raw_text?: boolean
  timeout_ms?: number
}

const L = GENERATE_OBJECT_LIMITS

/** generate_object's argument schema (precompiled by `npm run gen:validators`). */
export const generateObjectParameters: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['schema', 'prompt'],
  properties: {
    schema: {
      type: 'object',
      description:
        'JSON Schema of the object (at most 64 KiB): objects, arrays, enums, const, anyOf/oneOf/allOf, local $ref.',
    },
    prompt: { type: 'string', minLength: 1, description: 'What the object should describe.' },
    schema_name: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,59}$',
      description: `Name of the object, shown to the model (default "${L.defaultSchemaName}").`,
    },
    schema_description: {
      type: 'string',
      maxLength: L.maxSchemaDescriptionBytes,
      description: 'What the object is, shown to the model (at most 4 KiB).',
    },
    system: {
      type: 'string',
      maxLength: L.maxSystemBytes,
      description: 'System instructions for the model (at most 32 KiB).',
    },
    mode: {
      type: 'string',
      enum: ['auto', 'strict', 'json', 'tool', 'prompt'],
      description:
        'strict: native JSON Schema output; tool: a forced tool call; json: JSON object mode; prompt: instructions only; auto (default): the best the model supports.',
    },
    max_repair_attempts: {
      type: 'integer',
      minimum: 0,
      maximum: L.maxRepairAttempts,
      description: `Rounds that feed validation errors back to the model (default ${L.defaultRepairAttempts}).`,
    },
    include_raw_text: {
      type: 'boolean',
      description: "Add the model's last raw answer as metadata.raw_text.",
    },
    timeout_ms: {
      type: 'integer',
      minimum: L.minTimeoutMs,
      maximum: L.maxTimeoutMs,
      description: `One deadline over generation and repairs (default ${L.defaultTimeoutMs}).`,
    },
  },
}

/** Usage summed over every round. */
interface Usage {
  input_tokens: number
  output_tokens: number
}

/** What one model answer gave. */
interface Answer {
  text: string
  calls: ModelToolCall[]
  finishReason: ModelFinishReason
}

const encoder = new TextEncoder()

class PartialEmitter {
  private lastAt = -Infinity
  private lastJson: string | undefined

  constructor(
    private readonly emit: (delta: string) => void,
    private readonly wrapped: boolean,
  ) {}

  offer(source: string): void {
    const now = Date.now()
    if (now - this.lastAt < L.partialIntervalMs) return
    let value = parsePartialJson(source)
    if (this.wrapped) value = (value as { value?: unknown } | undefined)?.value
    if (value === undefined) return
    const json = JSON.stringify(value)
    if (json === this.lastJson) return
    this.lastJson = json
    this.lastAt = Date.now()
    this.emit(`{"object_partial":${json}}`)
  }
}

async function answer(
  model: LanguageModel,
  request: ModelRequest,
  signal: AbortSignal,
  usage: Usage,
  onSource: ((source: string) => void) | undefined,
  toolName: string | undefined,
): Promise<Answer> {
  if (!model.capabilities.streaming) {
    const r = await model.generate(request, { signal })
    usage.input_tokens += r.usage.inputTokens
    usage.output_tokens += r.usage.outputTokens
    return { text: r.text, calls: r.toolCalls, finishReason: r.finishReason }
  }
  let text = ''
  let args = ''
  let target: number | undefined
  const calls: ModelToolCall[] = []
  let finishReason: ModelFinishReason = 'other'
  for await (const part of model.stream(request, { signal })) {
    switch (part.type) {
      case 'text_delta':
        text += part.delta
        if (toolName === undefined) onSource?.(text)
        break
      case 'tool_call_delta':
        if (target === undefined && (part.name === undefined || part.name === toolName))
          target = part.index
        if (part.index === target) {
          args += part.argumentsDelta
          if (toolName !== undefined) onSource?.(args)
        }
        break
      case 'tool_call':
        calls.push(part.call)
        break
      case 'finish':
        finishReason = part.finishReason
        usage.input_tokens += part.usage.inputTokens
        usage.output_tokens += part.usage.outputTokens
        break
    }
  }
  return { text, calls, finishReason }
}

type Verdict =
  | { ok: true; value: unknown; raw: string }
  | { ok: false; problems: string[]; raw: string; call?: ModelToolCall }

function judge(mode: ObjectMode, task: ObjectTask, result: Answer): Verdict {
  const schema = task.schema
  let raw = result.text
  let call: ModelToolCall | undefined
  if (mode === 'tool') {
    call = result.calls.find((c) => c.name === task.name) ?? result.calls[0]
    if (call === undefined)
      return { ok: false, problems: [`no call of the tool "${task.name}"`], raw }
    raw = call.arguments.trim() === '' ? '{}' : call.arguments
  }
  const parsed = parseJsonText(raw)
  const cut =
    result.finishReason === 'length' ? ' (the answer was cut at the output token limit)' : ''
  if (!parsed.ok)
    return { ok: false, problems: [parsed.error + cut], raw, ...(call ? { call } : {}) }
  let value = parsed.value
  if (schema.wrapped && objectRootedIn(mode)) {
    const inner = value as { value?: unknown } | null
    if (typeof inner === 'object' && inner !== null && 'value' in inner) value = inner.value
  }
  const problems = schema.problems(value)
  if (problems.length === 0) return { ok: true, value, raw }
  return { ok: false, problems, raw, ...(call ? { call } : {}) }
}

function repairMessages(
  mode: ObjectMode,
  task: ObjectTask,
  result: Answer,
  verdict: Extract<Verdict, { ok: false }>,
): ModelMessage[] {
  const list = verdict.problems.map((p) => `- ${p}`).join('\n')
  if (mode === 'tool' && verdict.call !== undefined) {
    return [
      { role: 'assistant', content: result.text, toolCalls: [verdict.call] },
      {
        role: 'tool',
        toolCallId: verdict.call.id,
        toolName: verdict.call.name,
        isError: true,
        content: `These arguments are not a valid ${task.name}:\n${list}\nCall "${task.name}" again with the complete, corrected object.`,
      },
    ]
  }
  const again =
    mode === 'tool'
      ? `Call the tool "${task.name}" with the object.`
      : `Answer again with the complete, corrected ${task.name} as JSON only.`
  return [
    { role: 'assistant', content: result.text },
    { role: 'user', content: `Your answer is not a valid ${task.name}:\n${list}\n${again}` },
  ]
}

function checkBytes(value: string | undefined, max: number, field: string): void {
  if (value !== undefined && encoder.encode(value).length > max)
    throw new IsoagentError('invalid_argument', `${field} is longer than ${max} bytes`)
}

async function generate(
  model: LanguageModel,
  args: GenerateObjectArgs,
  context: ToolContext,
): Promise<ToolResult> {
  checkBytes(args.schema_description, L.maxSchemaDescriptionBytes, 'schema_description')
  checkBytes(args.system, L.maxSystemBytes, 'system')
  const schema: ObjectSchema = checkObjectSchema(args.schema)
  const requested = args.mode ?? 'auto'
  const mode = resolveMode(requested, model.capabilities)
  if (!supports(model.capabilities, mode))
    return toolFailure(
      GENERATE_OBJECT,
      `mode "${mode}" needs what the model ${model.provider}:${model.modelId} does not offer; use mode "auto"`,
      { type: 'unsupported', message: `mode ${mode} is not supported by this model` },
    )
  const task: ObjectTask = {
    prompt: args.prompt,
    name: args.schema_name ?? L.defaultSchemaName,
    schema,
    ...(args.system !== undefined ? { system: args.system } : {}),
    ...(args.schema_description !== undefined ? { description: args.schema_description } : {}),
  }
  const maxRepairs = args.max_repair_attempts ?? L.defaultRepairAttempts
  const timeoutMs = args.timeout_ms ?? L.defaultTimeoutMs
  const usage: Usage = { input_tokens: 0, output_tokens: 0 }
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort(new DOMException('generate_object deadline passed', 'TimeoutError'))
  }, timeoutMs)
  const onAbort = () => controller.abort(context.signal.reason)
  if (context.signal.aborted) onAbort()
  else context.signal.addEventListener('abort', onAbort, { once: true })
  let repairRounds = 0
  let raw = ''
  const facts = () => ({
    repair_rounds: repairRounds,
    mode_used: mode,
    usage: { ...usage },
    ...(args.include_raw_text === true ? { raw_text: raw } : {}),
  })
  try {
    const request = firstRequest(mode, task)
    const toolName = mode === 'tool' ? task.name : undefined
    // One emitter for the whole call: the 100 ms bound holds across repair rounds.
    const emitter = new PartialEmitter(
      (delta) => context.emitOutput(delta),
      schema.wrapped && objectRootedIn(mode),
    )
    for (;;) {
      const result = await answer(
        model,
        request,
        controller.signal,
        usage,
        (source) => emitter.offer(source),
        toolName,
      )
      const verdict = judge(mode, task, result)
      raw = verdict.raw
      if (verdict.ok) {
        context.emitOutput(`{"final":${JSON.stringify(verdict.value)}}`)
        const out = { object: verdict.value, ...facts() }
        return toolSuccess(GENERATE_OBJECT, JSON.stringify(out), out)
      }
      if (repairRounds >= maxRepairs) {
        const message = `no valid ${task.name} after ${repairRounds} repair round${repairRounds === 1 ? '' : 's'}:\n${verdict.problems.map((p) => `- ${p}`).join('\n')}`
        return toolFailure(
          GENERATE_OBJECT,
          message,
          { type: 'invalid_argument', message },
          { ...facts(), validation_errors: verdict.problems },
        )
      }
      repairRounds++
      request.messages.push(...repairMessages(mode, task, result, verdict))
    }
  } catch (error) {
    if (timedOut) {
      return toolFailure(
        GENERATE_OBJECT,
        `generate_object: no valid object within timeout_ms=${timeoutMs}`,
        { type: 'timeout', op: GENERATE_OBJECT, duration_ms: timeoutMs },
        facts(),
      )
    }
    if (context.signal.aborted)
      throw new IsoagentError('cancelled', 'generate_object was cancelled', { cause: error })
    const message = error instanceof Error ? error.message : String(error)
    return toolFailure(GENERATE_OBJECT, message, errorKindOf(error, GENERATE_OBJECT), facts())
  } finally {
    clearTimeout(timer)
    context.signal.removeEventListener('abort', onAbort)
  }
}

/**
 * The generate_object tool over `model`: a JSON value matching a caller's schema, generated in
 * the best mode the model supports, validated (interpreting validator) and repaired.
 */
export function createGenerateObjectTool(model: LanguageModel): ToolSpec<GenerateObjectArgs> {
  return {
    name: GENERATE_OBJECT,
    pathArguments: [],
    description:
      'Generate a JSON object that matches a JSON Schema, with the session model. The object is validated; ' +
      'validation errors are fed back to the model for up to max_repair_attempts rounds, all within timeout_ms. ' +
      'Returns {object, repair_rounds, mode_used, usage} only when the object is valid. Streams ' +
      '{"object_partial": ...} deltas (at most every 100 ms), then {"final": object}.',
    parameters: generateObjectParameters,
    available: () => true,
    // Each delta is one whole JSON document: sanitised on its own, never joined to the next.
    streamedOutput: 'messages',
    scheduling: {
      read_only: true,
      idempotent: false,
      resumable: false,
      cancellation_safe: true,
      supports_pagination: false,
      max_parallelism: 4,
      output_kind: 'json',
    },
    ownDeadlineMs: (args) => args.timeout_ms ?? L.defaultTimeoutMs,
    run: (args, context) => generate(model, args, context),
  }
}
