import { IsoagentError } from '../errors.ts'
import type { ToolScheduling } from '../kernel/tool-spec.ts'
import type {
  LanguageModel,
  ModelFinishReason,
  ModelMessage,
  ModelTool,
  ModelToolCall,
  ModelUsage,
} from '../llm/language-model.ts'
import { toolFailure, type ToolResult } from '../tool-result.ts'
import type {
  AgentEvent,
  AgentFinishReason,
  AgentRunResult,
  AgentStep,
  AgentToolCall,
  AgentToolResult,
} from './agent-events.ts'

/** Steps of a run when the caller gives no `maxSteps`. */
export const DEFAULT_MAX_STEPS = 20
/** Most steps a run may be given. */
export const MAX_STEPS_LIMIT = 1000

/** What one run of the loop works with. */
export interface LoopConfig {
  model: LanguageModel
  /** The tools offered to the model. */
  tools: ModelTool[]
  /** When set, calls of other tools are refused without reaching the kernel. */
  allowed?: ReadonlySet<string>
  /** Runs one call through the kernel (the caller picks the origin). */
  invoke(
    name: string,
    args: unknown,
    options: { signal: AbortSignal; onOutput: (delta: string) => void },
  ): Promise<ToolResult>
  scheduling(name: string): ToolScheduling | undefined
  /** A call's arguments as events may show them (the tool's own redaction); default as given. */
  eventArgs?(name: string, args: unknown): unknown
  /** The conversation so far, ending with the new user message; the run appends to it. */
  messages: ModelMessage[]
  system?: string
  maxSteps: number
  signal: AbortSignal
  emit(event: AgentEvent): void
}

/** Check a `maxSteps` option: an integer in 1..{@link MAX_STEPS_LIMIT}. */
export function checkMaxSteps(value: unknown, what = 'maxSteps'): number {
  if (value === undefined) return DEFAULT_MAX_STEPS
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_STEPS_LIMIT)
    throw new IsoagentError(
      'invalid_argument',
      `${what} must be an integer in 1..${MAX_STEPS_LIMIT}`,
    )
  return value
}

const cancelled = () => new IsoagentError('cancelled', 'the agent run was cancelled')

function parseArgs(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (text.trim() === '') return { ok: true, value: {} }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (error) {
    return { ok: false, error: (error as Error).message }
  }
}

/** The text a tool result is shown to the model as. */
export function resultContent(result: ToolResult): string {
  if (result.exitCode === 0) return result.output
  return `Error (${result.errorKind?.type ?? 'failed'}): ${result.output}`
}

/**
 * One run of the agent loop: ask the model, run the tool calls it makes (each through the kernel),
 * feed the results back, until it answers without tool calls or `maxSteps` requests were made.
 * A denied or failed call reaches the model as an error result. The conversation gets whole steps
 * only: an assistant message and then every one of its tool results. Throws the model's
 * `IsoagentError` on a failed request, and `cancelled` when `signal` aborts (after the running
 * tools have settled).
 */
export async function runAgentLoop(config: LoopConfig): Promise<AgentRunResult> {
  const { model, signal, emit, messages } = config
  const steps: AgentStep[] = []
  const usage: ModelUsage = { inputTokens: 0, outputTokens: 0 }
  const offered = config.tools.length > 0
  for (let n = 1; ; n++) {
    if (signal.aborted) throw cancelled()
    emit({ type: 'step_start', step: n })
    const request = {
      messages: config.system
        ? [{ role: 'system' as const, content: config.system }, ...messages]
        : messages,
      ...(offered ? { tools: config.tools, toolChoice: 'auto' as const } : {}),
    }
    let text = ''
    const calls: ModelToolCall[] = []
    let finishReason: ModelFinishReason = 'other'
    const stepUsage: ModelUsage = { inputTokens: 0, outputTokens: 0 }
    try {
      for await (const part of model.stream(request, { signal })) {
        if (signal.aborted) throw cancelled()
        switch (part.type) {
          case 'text_delta':
            text += part.delta
            emit({ type: 'text_delta', step: n, delta: part.delta })
            break
          case 'tool_call':
            calls.push(part.call)
            break
          case 'finish':
            finishReason = part.finishReason
            stepUsage.inputTokens = part.usage.inputTokens
            stepUsage.outputTokens = part.usage.outputTokens
            break
        }
      }
    } catch (error) {
      if (signal.aborted) throw cancelled()
      throw error
    }
    if (signal.aborted) throw cancelled()
    usage.inputTokens += stepUsage.inputTokens
    usage.outputTokens += stepUsage.outputTokens
    const toolCalls: AgentToolCall[] = calls.map((c) => {
      const parsed = parseArgs(c.arguments)
      return { id: c.id, name: c.name, args: parsed.ok ? parsed.value : c.arguments }
    })
    for (const c of toolCalls)
      emit({
        type: 'tool_call',
        step: n,
        toolCallId: c.id,
        toolName: c.name,
        args: config.eventArgs ? config.eventArgs(c.name, c.args) : c.args,
      })
    messages.push({
      role: 'assistant',
      content: text,
      ...(calls.length > 0 ? { toolCalls: calls.map((c) => ({ ...c })) } : {}),
    })
    const toolResults = calls.length > 0 ? await runCalls(config, n, calls) : []
    for (const r of toolResults) {
      messages.push({
        role: 'tool',
        toolCallId: r.toolCallId,
        toolName: r.toolName,
        content: r.content,
        ...(r.exitCode === 0 ? {} : { isError: true }),
      })
    }
    const step: AgentStep = {
      step: n,
      text,
      toolCalls,
      toolResults: toolResults.map(({ content: _c, ...r }) => r),
      finishReason,
      usage: stepUsage,
    }
    steps.push(step)
    emit({ type: 'step_end', step: n, finishReason, usage: stepUsage })
    if (signal.aborted) throw cancelled()
    if (calls.length === 0 || n >= config.maxSteps) {
      const reason: AgentFinishReason =
        calls.length > 0 ? 'max_steps' : finishReason === 'tool_calls' ? 'stop' : finishReason
      const result: AgentRunResult = { text, steps, usage: { ...usage }, finishReason: reason }
      emit({ type: 'finish', text, steps: steps.length, usage: { ...usage }, finishReason: reason })
      return result
    }
  }
}

type StepResult = AgentToolResult & { content: string }

async function runCalls(config: LoopConfig, step: number, calls: ModelToolCall[]) {
  const parallel = calls.every((c) => {
    const s = config.scheduling(c.name)
    return s !== undefined && s.read_only && s.idempotent
  })
  const one = async (call: ModelToolCall): Promise<StepResult> => {
    const result = await runCall(config, step, call)
    const out: StepResult = {
      toolCallId: call.id,
      toolName: call.name,
      exitCode: result.exitCode,
      ...(result.errorKind ? { errorKind: result.errorKind } : {}),
      output: result.output,
      content: resultContent(result),
    }
    config.emit({
      type: 'tool_result',
      step,
      toolCallId: out.toolCallId,
      toolName: out.toolName,
      exitCode: out.exitCode,
      ...(out.errorKind ? { errorKind: out.errorKind } : {}),
      output: out.output,
      ...(result.metadata ? { metadata: result.metadata } : {}),
    })
    return out
  }
  if (parallel) return Promise.all(calls.map(one))
  const results: StepResult[] = []
  for (const call of calls) results.push(await one(call))
  return results
}

async function runCall(config: LoopConfig, step: number, call: ModelToolCall): Promise<ToolResult> {
  if (config.allowed !== undefined && !config.allowed.has(call.name)) {
    const message = `tool "${call.name}" is not available here; available: ${[...config.allowed].join(', ')}`
    return toolFailure(call.name, message, { type: 'unsupported', message })
  }
  const parsed = parseArgs(call.arguments)
  if (!parsed.ok) {
    const message = `the arguments of ${call.name} are not valid JSON: ${parsed.error}`
    return toolFailure(call.name, message, { type: 'invalid_argument', message })
  }
  if (config.signal.aborted) {
    return toolFailure(call.name, `${call.name} was cancelled before it started`, {
      type: 'cancelled',
      op: call.name,
    })
  }
  return config.invoke(call.name, parsed.value, {
    signal: config.signal,
    onOutput: (delta) =>
      config.emit({
        type: 'tool_output_delta',
        step,
        toolCallId: call.id,
        toolName: call.name,
        delta,
      }),
  })
}
