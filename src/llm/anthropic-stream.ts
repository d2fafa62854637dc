import type {
  ModelFinishReason,
  ModelStreamPart,
  ModelToolCall,
  ModelUsage,
} from './language-model.ts'
import { eventError, finishOf, type Block, type Json } from './anthropic-response.ts'
import { cutStream, parseChunk, sseEvents, type RequestScope } from './provider-http.ts'

/** The parts so far of one messages stream: tool calls by block index, finish, usage. */
class StreamState {
  readonly tools = new Map<number, { index: number; call: ModelToolCall }>()
  finishReason: ModelFinishReason = 'other'
  readonly usage: ModelUsage = { inputTokens: 0, outputTokens: 0 }
  done = false

  constructor(private readonly scope: RequestScope) {}

  /** The stream parts one SSE event gives. */
  *onEvent(data: Json): Generator<ModelStreamPart> {
    switch (data.type) {
      case 'message_start':
        this.countUsage(((data.message as Json | undefined)?.usage ?? {}) as Json)
        break
      case 'content_block_start':
        yield* this.blockStart(data)
        break
      case 'content_block_delta':
        yield* this.blockDelta(data)
        break
      case 'content_block_stop': {
        const tool = this.tools.get(typeof data.index === 'number' ? data.index : -1)
        if (tool !== undefined) {
          if (tool.call.arguments === '') tool.call.arguments = '{}'
          yield { type: 'tool_call', index: tool.index, call: tool.call }
        }
        break
      }
      case 'message_delta': {
        const delta = (data.delta ?? {}) as Json
        if (delta.stop_reason !== undefined && delta.stop_reason !== null)
          this.finishReason = finishOf(delta.stop_reason)
        this.countUsage((data.usage ?? {}) as Json)
        break
      }
      case 'message_stop':
        this.done = true
        break
      case 'error':
        throw eventError(this.scope, data.error)
      default:
        break
    }
  }

  private countUsage(u: Json): void {
    if (typeof u.input_tokens === 'number') this.usage.inputTokens = u.input_tokens
    if (typeof u.output_tokens === 'number') this.usage.outputTokens = u.output_tokens
  }

  /** A new content block: a tool call starts, or text arrives with the block. */
  private *blockStart(data: Json): Generator<ModelStreamPart> {
    const block = (data.content_block ?? {}) as Block
    const tools = this.tools
    const at = typeof data.index === 'number' ? data.index : tools.size
    if (block.type === 'tool_use') {
      const call: ModelToolCall = {
        id: typeof block.id === 'string' ? block.id : `toolu_${tools.size}`,
        name: typeof block.name === 'string' ? block.name : '',
        arguments: '',
      }
      const index = tools.size
      tools.set(at, { index, call })
      yield { type: 'tool_call_delta', index, id: call.id, name: call.name, argumentsDelta: '' }
    } else if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
      yield { type: 'text_delta', delta: block.text }
    }
  }

  /** More text, or more of a tool call's JSON arguments. */
  private *blockDelta(data: Json): Generator<ModelStreamPart> {
    const delta = (data.delta ?? {}) as Json
    if (delta.type === 'text_delta' && typeof delta.text === 'string') {
      if (delta.text !== '') yield { type: 'text_delta', delta: delta.text }
    } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
      const tool = this.tools.get(typeof data.index === 'number' ? data.index : -1)
      if (tool !== undefined) {
        tool.call.arguments += delta.partial_json
        yield { type: 'tool_call_delta', index: tool.index, argumentsDelta: delta.partial_json }
      }
    }
  }
}

/**
 * The {@link ModelStreamPart}s of a streamed messages answer, ending with `finish`; a stream
 * that stops before `message_stop` fails as cut.
 */
export async function* anthropicStreamParts(
  response: Response,
  scope: RequestScope,
): AsyncGenerator<ModelStreamPart> {
  const state = new StreamState(scope)
  for await (const event of sseEvents(response, scope)) {
    yield* state.onEvent(parseChunk(scope, event.data))
    if (state.done) break
  }
  if (!state.done) throw cutStream(scope)
  yield { type: 'finish', finishReason: state.finishReason, usage: state.usage }
}
