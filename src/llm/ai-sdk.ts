import type {
  JSONSchema7,
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3FinishReason,
  LanguageModelV3Message,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider'
import { IsoagentError } from '../errors.ts'
import type {
  LanguageModel,
  ModelCallOptions,
  ModelCapabilities,
  ModelFinishReason,
  ModelMessage,
  ModelRequest,
  ModelResponse,
  ModelStreamPart,
  ModelUsage,
} from './language-model.ts'
import { parseRetryAfter } from './provider-http.ts'

/**
 * The part of an AI SDK `LanguageModelV3` (`@ai-sdk/provider@3`) that {@link fromAISDK} uses,
 * stated structurally so that isoagent's declarations type-check without the optional peers
 * installed. Any `LanguageModelV3` is assignable to it.
 */
export interface AISDKLanguageModel {
  readonly specificationVersion: 'v3'
  readonly provider: string
  readonly modelId: string
  // Method syntax: parameters are compared bivariantly, so the real signatures fit.
  doGenerate(options: never): PromiseLike<unknown>
  doStream(options: never): PromiseLike<unknown>
}

/** Options of {@link fromAISDK}. */
export interface FromAISDKOptions {
  /** What the model supports, over the defaults (all true: the AI SDK emulates what it lacks). */
  capabilities?: Partial<ModelCapabilities>
}

const FINISH: Record<LanguageModelV3FinishReason['unified'], ModelFinishReason> = {
  stop: 'stop',
  length: 'length',
  'content-filter': 'content_filter',
  'tool-calls': 'tool_calls',
  error: 'other',
  other: 'other',
}

function usageOf(usage: LanguageModelV3Usage | undefined): ModelUsage {
  return {
    inputTokens: usage?.inputTokens.total ?? 0,
    outputTokens: usage?.outputTokens.total ?? 0,
  }
}

function inputOf(args: string): unknown {
  try {
    return JSON.parse(args) as unknown
  } catch {
    return {}
  }
}

function promptOf(messages: ModelMessage[]): LanguageModelV3Message[] {
  const prompt: LanguageModelV3Message[] = []
  for (const m of messages) {
    switch (m.role) {
      case 'system':
        prompt.push({ role: 'system', content: m.content })
        break
      case 'user':
        prompt.push({ role: 'user', content: [{ type: 'text', text: m.content }] })
        break
      case 'assistant':
        prompt.push({
          role: 'assistant',
          content: [
            ...(m.content === '' ? [] : [{ type: 'text' as const, text: m.content }]),
            ...(m.toolCalls ?? []).map((c) => ({
              type: 'tool-call' as const,
              toolCallId: c.id,
              toolName: c.name,
              input: inputOf(c.arguments),
            })),
          ],
        })
        break
      case 'tool': {
        const part = {
          type: 'tool-result' as const,
          toolCallId: m.toolCallId,
          toolName: m.toolName,
          output:
            m.isError === true
              ? { type: 'error-text' as const, value: m.content }
              : { type: 'text' as const, value: m.content },
        }
        const last = prompt[prompt.length - 1]
        if (last?.role === 'tool') last.content.push(part)
        else prompt.push({ role: 'tool', content: [part] })
        break
      }
    }
  }
  return prompt
}

function callOptionsOf(request: ModelRequest, signal?: AbortSignal): LanguageModelV3CallOptions {
  const options: LanguageModelV3CallOptions = { prompt: promptOf(request.messages) }
  if (request.tools !== undefined && request.tools.length > 0) {
    options.tools = request.tools.map((t) => ({
      type: 'function',
      name: t.name,
      description: t.description,
      inputSchema: t.parameters as JSONSchema7,
    }))
  }
  const choice = request.toolChoice
  if (choice !== undefined)
    options.toolChoice =
      typeof choice === 'string' ? { type: choice } : { type: 'tool', toolName: choice.name }
  const format = request.responseFormat
  if (format?.type === 'json_object') options.responseFormat = { type: 'json' }
  else if (format?.type === 'json_schema')
    options.responseFormat = {
      type: 'json',
      schema: format.schema,
      name: format.name,
      ...(format.description !== undefined ? { description: format.description } : {}),
    }
  if (request.maxOutputTokens !== undefined) options.maxOutputTokens = request.maxOutputTokens
  if (request.temperature !== undefined) options.temperature = request.temperature
  if (signal !== undefined) options.abortSignal = signal
  return options
}

/** The typed failure for whatever an AI SDK model threw (its `APICallError` shape is read). */
export function failureOf(
  error: unknown,
  op: string,
  signal: AbortSignal | undefined,
): IsoagentError {
  if (IsoagentError.is(error)) return error
  if (signal?.aborted === true) {
    const reason: unknown = signal.reason
    const timedOut =
      typeof reason === 'object' &&
      reason !== null &&
      (reason as { name?: unknown }).name === 'TimeoutError'
    return timedOut
      ? new IsoagentError('timeout', `${op}: no complete answer within the deadline`, {
          data: { op, duration_ms: 0 },
        })
      : new IsoagentError('cancelled', `${op}: cancelled`, { data: { op } })
  }
  const e = (typeof error === 'object' && error !== null ? error : {}) as {
    message?: unknown
    statusCode?: unknown
    responseHeaders?: unknown
  }
  const message = typeof e.message === 'string' ? e.message : String(error)
  const status = typeof e.statusCode === 'number' ? e.statusCode : undefined
  if (status === 429) {
    const headers =
      typeof e.responseHeaders === 'object' && e.responseHeaders !== null
        ? new Headers(e.responseHeaders as Record<string, string>)
        : new Headers()
    return new IsoagentError('rate_limited', `${op}: rate limited: ${message}`, {
      data: { op, status, retry_after_ms: parseRetryAfter(headers) },
      cause: error,
    })
  }
  if (status !== undefined && status >= 400 && status < 500 && status !== 408)
    return new IsoagentError(
      'invalid_argument',
      `${op}: the provider refused the request: ${message}`,
      {
        data: { op, status },
        cause: error,
      },
    )
  return new IsoagentError('transport', `${op}: ${message}`, {
    data: { op, ...(status !== undefined ? { status } : {}) },
    cause: error,
  })
}

/**
 * A {@link LanguageModel} over an AI SDK `LanguageModelV3` (`@ai-sdk/provider@3`, e.g. what
 * `@ai-sdk/openai` returns). Only the model's own methods are used: neither `ai` nor
 * `@ai-sdk/provider` is loaded at run time.
 */
export function fromAISDK(
  aisdkModel: AISDKLanguageModel,
  options: FromAISDKOptions = {},
): LanguageModel {
  const candidate = aisdkModel as unknown as LanguageModelV3 | null
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    candidate.specificationVersion !== 'v3'
  )
    throw new IsoagentError(
      'invalid_argument',
      'fromAISDK needs a LanguageModelV3 (specificationVersion "v3")',
    )
  const model: LanguageModelV3 = candidate
  const op = `${model.provider}:${model.modelId}`
  const capabilities: ModelCapabilities = {
    tools: true,
    toolChoice: true,
    jsonSchema: true,
    jsonObject: true,
    streaming: true,
    ...options.capabilities,
  }

  async function generate(
    request: ModelRequest,
    callOptions: ModelCallOptions = {},
  ): Promise<ModelResponse> {
    try {
      const result = await model.doGenerate(callOptionsOf(request, callOptions.signal))
      const response: ModelResponse = {
        text: '',
        toolCalls: [],
        finishReason: FINISH[result.finishReason.unified],
        usage: usageOf(result.usage),
      }
      for (const part of result.content) {
        if (part.type === 'text') response.text += part.text
        else if (part.type === 'tool-call' && part.providerExecuted !== true)
          response.toolCalls.push({
            id: part.toolCallId,
            name: part.toolName,
            arguments: part.input,
          })
      }
      return response
    } catch (error) {
      throw failureOf(error, op, callOptions.signal)
    }
  }

  async function* stream(
    request: ModelRequest,
    callOptions: ModelCallOptions = {},
  ): AsyncGenerator<ModelStreamPart> {
    let reader: ReadableStreamDefaultReader<LanguageModelV3StreamPart> | undefined
    try {
      const result = await model.doStream(callOptionsOf(request, callOptions.signal))
      reader = result.stream.getReader()
      const indexOf = new Map<string, number>()
      const index = (id: string) => {
        let i = indexOf.get(id)
        if (i === undefined) indexOf.set(id, (i = indexOf.size))
        return i
      }
      let finished = false
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        switch (value.type) {
          case 'text-delta':
            if (value.delta !== '') yield { type: 'text_delta', delta: value.delta }
            break
          case 'tool-input-start':
            yield {
              type: 'tool_call_delta',
              index: index(value.id),
              id: value.id,
              name: value.toolName,
              argumentsDelta: '',
            }
            break
          case 'tool-input-delta':
            yield { type: 'tool_call_delta', index: index(value.id), argumentsDelta: value.delta }
            break
          case 'tool-call':
            if (value.providerExecuted === true) break
            yield {
              type: 'tool_call',
              index: index(value.toolCallId),
              call: { id: value.toolCallId, name: value.toolName, arguments: value.input },
            }
            break
          case 'error':
            throw value.error
          case 'finish':
            finished = true
            yield {
              type: 'finish',
              finishReason: FINISH[value.finishReason.unified],
              usage: usageOf(value.usage),
            }
            break
          default:
            break
        }
      }
      if (!finished)
        throw new IsoagentError(
          'transport',
          `${op}: the stream ended before the answer was complete`,
          {
            data: { op },
          },
        )
    } catch (error) {
      throw failureOf(error, op, callOptions.signal)
    } finally {
      reader?.cancel().catch(() => undefined)
    }
  }

  return { provider: model.provider, modelId: model.modelId, capabilities, generate, stream }
}
