// An in-process LanguageModel that answers from a script (unit tests beside the wire tests).
import { IsoagentError } from '../../src/errors.ts'
import type {
  LanguageModel,
  ModelRequest,
  ModelResponse,
  ModelStreamPart,
} from '../../src/llm/language-model.ts'

/** One scripted answer: text and tool calls (arguments as objects or raw text). */
export interface ScriptedTurn {
  text?: string
  calls?: { name: string; args: unknown }[]
  /** Wait this long (ms) after the first text delta, honouring the signal. */
  delayMs?: number
  /** Fail the request with this error instead. */
  error?: IsoagentError
}

export type Script = ScriptedTurn | ((request: ModelRequest, index: number) => ScriptedTurn)

let ids = 0

/** A model answering request i with `script[i]` (the last entry repeats). */
export function scriptedModel(script: Script[]): LanguageModel & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = []
  const next = (request: ModelRequest): ScriptedTurn => {
    const i = requests.length
    requests.push(structuredClone(request))
    const entry = script[Math.min(i, script.length - 1)]!
    return typeof entry === 'function' ? entry(request, i) : entry
  }
  const wait = (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms)
      signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer)
          reject(new IsoagentError('cancelled', 'the model request was cancelled'))
        },
        { once: true },
      )
    })
  const parts = async function* (
    turn: ScriptedTurn,
    signal?: AbortSignal,
  ): AsyncGenerator<ModelStreamPart> {
    if (signal?.aborted) throw new IsoagentError('cancelled', 'the model request was cancelled')
    if (turn.error) throw turn.error
    const text = turn.text ?? ''
    const half = Math.ceil(text.length / 2)
    if (text.length > 0) yield { type: 'text_delta', delta: text.slice(0, half) }
    if (turn.delayMs) await wait(turn.delayMs, signal)
    if (text.length > half) yield { type: 'text_delta', delta: text.slice(half) }
    const calls = turn.calls ?? []
    for (const [index, c] of calls.entries()) {
      const args = typeof c.args === 'string' ? c.args : JSON.stringify(c.args)
      const id = `call_${++ids}`
      yield { type: 'tool_call_delta', index, id, name: c.name, argumentsDelta: args }
      yield { type: 'tool_call', index, call: { id, name: c.name, arguments: args } }
    }
    yield {
      type: 'finish',
      finishReason: calls.length > 0 ? 'tool_calls' : 'stop',
      usage: { inputTokens: 10, outputTokens: 5 },
    }
  }
  return {
    provider: 'scripted',
    modelId: 'scripted-1',
    capabilities: {
      tools: true,
      toolChoice: true,
      jsonSchema: false,
      jsonObject: false,
      streaming: true,
    },
    requests,
    stream(request, options) {
      return parts(next(request), options?.signal)
    },
    async generate(request, options): Promise<ModelResponse> {
      const response: ModelResponse = {
        text: '',
        toolCalls: [],
        finishReason: 'stop',
        usage: { inputTokens: 0, outputTokens: 0 },
      }
      for await (const part of parts(next(request), options?.signal)) {
        if (part.type === 'text_delta') response.text += part.delta
        else if (part.type === 'tool_call') response.toolCalls.push(part.call)
        else if (part.type === 'finish') {
          response.finishReason = part.finishReason
          response.usage = part.usage
        }
      }
      return response
    },
  }
}
