import { IsoagentError } from '../errors.ts'
import type { Kernel } from '../kernel/kernel.ts'
import type { ToolSpec } from '../kernel/tool-spec.ts'
import type { LanguageModel, ModelMessage, ModelTool } from '../llm/language-model.ts'
import type { AgentEvent, AgentRunResult } from './agent-events.ts'
import { checkMaxSteps, runAgentLoop } from './agent-loop.ts'
import { EventChannel } from './event-channel.ts'
import { StreamRedactor } from './stream-redactor.ts'

/** Options of `session.send()` and `session.stream()`. */
export interface TurnOptions {
  /** Cancels the turn: the model request and the running tools are aborted. */
  signal?: AbortSignal
  /** Most model requests of this turn (default 20, at most 1000). */
  maxSteps?: number
}

/**
 * `emit` behind redaction of what the model wrote (tool results are sanitised by the kernel):
 * text deltas through a {@link StreamRedactor}, flushed before any other event, so a secret split
 * over deltas never shows.
 */
function redactingEmit(kernel: Kernel, emit: (event: AgentEvent) => void) {
  const secrets = kernel.redactSecrets()
  const redactor = new StreamRedactor((t) => kernel.sanitize(t), secrets)
  let step = 0
  return (event: AgentEvent) => {
    if (event.type === 'text_delta') {
      step = event.step
      const delta = redactor.push(event.delta)
      if (delta !== '') emit({ ...event, delta })
      return
    }
    const rest = redactor.flush()
    if (rest !== '') emit({ type: 'text_delta', step, delta: rest })
    emit(event.type === 'tool_call' || event.type === 'finish' ? kernel.sanitize(event) : event)
  }
}

/** Most characters of one prompt. */
export const MAX_PROMPT_CHARS = 1_000_000

/**
 * The conversation of a session with its model: the history the model sees, and the one turn
 * that may run at a time. Every tool call of a turn is a kernel call of the `agent` origin.
 */
export class Conversation {
  readonly messages: ModelMessage[]
  private running: { controller: AbortController; done: Promise<unknown> } | undefined
  private tools: ModelTool[] | undefined
  private listed: readonly ToolSpec<Record<string, unknown>>[] | undefined

  constructor(
    private readonly kernel: Kernel,
    private readonly model: LanguageModel | undefined,
    /** The system prompt, or a function giving it per turn (it carries the skill catalog). */
    private readonly system: string | undefined | (() => string | undefined),
    messages: ModelMessage[] = [],
  ) {
    this.messages = structuredClone(messages)
  }

  get busy(): boolean {
    return this.running !== undefined
  }

  /** Check what a turn needs before it starts (throws `unsupported` / `invalid_argument`). */
  check(prompt: unknown, options: TurnOptions): number {
    if (this.model === undefined)
      throw new IsoagentError(
        'unsupported',
        'this session has no model: create its agent with Agent.create({ model })',
      )
    if (typeof prompt !== 'string' || prompt.trim() === '')
      throw new IsoagentError('invalid_argument', 'the prompt must be a non-empty string')
    if (prompt.length > MAX_PROMPT_CHARS)
      throw new IsoagentError(
        'invalid_argument',
        `the prompt is over ${MAX_PROMPT_CHARS} characters`,
      )
    if (typeof options !== 'object' || options === null)
      throw new IsoagentError('invalid_argument', 'turn options must be an object')
    const maxSteps = checkMaxSteps(options.maxSteps)
    if (this.kernel.closed) throw new IsoagentError('cancelled', 'the session is closed')
    if (this.running !== undefined)
      throw new IsoagentError(
        'invalid_argument',
        'a turn is already running in this session; wait for it or cancel it',
      )
    return maxSteps
  }

  /** Run a turn, streaming its events. Throws (before any event) when it cannot start. */
  stream(prompt: string, options: TurnOptions = {}): AsyncIterableIterator<AgentEvent> {
    const maxSteps = this.check(prompt, options)
    const turn: { current?: { abort: () => void; done: Promise<unknown> } } = {}
    const channel = new EventChannel<AgentEvent>(async () => {
      turn.current?.abort()
      await turn.current?.done.catch(() => undefined)
    })
    turn.current = this.start(prompt, maxSteps, options.signal, (event) => channel.push(event))
    turn.current.done.then(
      () => channel.end(),
      (error: unknown) => channel.end(error),
    )
    return channel
  }

  /** Run a turn to its end: the final text, every step and the tokens used. */
  async send(prompt: string, options: TurnOptions = {}): Promise<AgentRunResult> {
    const maxSteps = this.check(prompt, options)
    return this.start(prompt, maxSteps, options.signal, () => {}).done
  }

  private start(
    prompt: string,
    maxSteps: number,
    external: AbortSignal | undefined,
    emit: (event: AgentEvent) => void,
  ): { abort: () => void; done: Promise<AgentRunResult> } {
    const controller = new AbortController()
    const abort = () =>
      controller.abort(new IsoagentError('cancelled', 'the agent run was cancelled'))
    if (external?.aborted) abort()
    external?.addEventListener('abort', abort, { once: true })
    const messages = this.messages
    messages.push({ role: 'user', content: prompt })
    const kernel = this.kernel
    // The tool set changes only when MCP servers come, go or re-list: rebuilt only then.
    const listed = kernel.list()
    if (
      this.tools === undefined ||
      this.listed === undefined ||
      listed.length !== this.listed.length ||
      listed.some((t, i) => t !== this.listed![i])
    ) {
      this.listed = listed
      this.tools = listed.map((t) => ({
        name: t.name,
        description: t.description,
        parameters: structuredClone(t.parameters),
      }))
    }
    const system = typeof this.system === 'function' ? this.system() : this.system
    const done = runAgentLoop({
      model: this.model!,
      tools: this.tools,
      invoke: (name, args, o) =>
        kernel.invoke({ name, args, origin: 'agent', signal: o.signal, onOutput: o.onOutput }),
      scheduling: (name) => kernel.tool(name)?.scheduling,
      eventArgs: (name, args) => kernel.eventArgs(name, args),
      messages,
      ...(system !== undefined ? { system } : {}),
      maxSteps,
      signal: controller.signal,
      emit: redactingEmit(kernel, emit),
    }).then((result) => ({ ...result, text: kernel.sanitize(result.text) }))
    const entry = { controller, done }
    this.running = entry
    const settle = () => {
      external?.removeEventListener('abort', abort)
      if (this.running === entry) this.running = undefined
    }
    done.then(settle, settle)
    return { abort, done }
  }

  /** Abort the running turn (if any) and wait until it has settled. */
  async close(): Promise<void> {
    const running = this.running
    if (running === undefined) return
    running.controller.abort(new IsoagentError('cancelled', 'the session is closed'))
    await running.done.catch(() => undefined)
  }
}
