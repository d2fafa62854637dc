import { IsoagentError } from '../errors.ts'
import type {
  LanguageModel,
  ModelCallOptions,
  ModelCapabilities,
  ModelFinishReason,
  ModelRequest,
  ModelResponse,
  ModelStreamPart,
  ModelToolCall,
  ModelUsage,
} from './language-model.ts'
import {
  PROVIDER_DEFAULTS,
  RequestScope,
  checkProviderOptions,
  cutStream,
  endpoint,
  parseChunk,
  postJson,
  readJson,
  sseEvents,
  statusError,
  type ProviderHttpOptions,
} from './provider-http.ts'
import { toOpenAITools } from './tool-specs.ts'

/** Options of {@link openAICompatible}. */
export interface OpenAICompatibleOptions extends ProviderHttpOptions {
  /** The model id sent as `model`. */
  model: string
  /** What the endpoint supports, over the defaults (all true). */
  capabilities?: Partial<ModelCapabilities>
  /** Name reported as `LanguageModel.provider` (default `openai-compatible`). */
  provider?: string
}

const OPENAI_CAPABILITIES: ModelCapabilities = {
  tools: true,
  toolChoice: true,
  jsonSchema: true,
  jsonObject: true,
  streaming: true,
}

const FINISH: Record<string, ModelFinishReason> = {
  stop: 'stop',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  length: 'length',
  content_filter: 'content_filter',
}

type Json = Record<string, unknown>

function finishOf(value: unknown): ModelFinishReason {
  return (typeof value === 'string' ? FINISH[value] : undefined) ?? 'other'
}

function usageOf(value: unknown): ModelUsage {
  const u = (value ?? {}) as { prompt_tokens?: unknown; completion_tokens?: unknown }
  return {
    inputTokens: typeof u.prompt_tokens === 'number' ? u.prompt_tokens : 0,
    outputTokens: typeof u.completion_tokens === 'number' ? u.completion_tokens : 0,
  }
}

/** The chat-completions request body for `request`. */
export function openAIRequestBody(model: string, request: ModelRequest, stream: boolean): Json {
  const messages = request.messages.map((m): Json => {
    switch (m.role) {
      case 'system':
      case 'user':
        return { role: m.role, content: m.content }
      case 'assistant':
        return m.toolCalls !== undefined && m.toolCalls.length > 0
          ? {
              role: 'assistant',
              content: m.content === '' ? null : m.content,
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: 'function',
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : { role: 'assistant', content: m.content }
      case 'tool':
        return { role: 'tool', tool_call_id: m.toolCallId, content: m.content }
    }
  })
  const body: Json = { model, messages }
  if (request.tools !== undefined && request.tools.length > 0)
    body.tools = toOpenAITools(request.tools)
  const choice = request.toolChoice
  if (choice !== undefined)
    body.tool_choice =
      typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } }
  const format = request.responseFormat
  if (format !== undefined && format.type !== 'text') {
    body.response_format =
      format.type === 'json_object'
        ? { type: 'json_object' }
        : {
            type: 'json_schema',
            json_schema: {
              name: format.name,
              ...(format.description !== undefined ? { description: format.description } : {}),
              schema: format.schema,
              strict: format.strict,
            },
          }
  }
  if (request.maxOutputTokens !== undefined) body.max_tokens = request.maxOutputTokens
  if (request.temperature !== undefined) body.temperature = request.temperature
  if (stream) {
    body.stream = true
    body.stream_options = { include_usage: true }
  }
  return body
}

function chunkError(scope: RequestScope, error: unknown): IsoagentError {
  const e = (error ?? {}) as { message?: unknown; code?: unknown; type?: unknown }
  const message = typeof e.message === 'string' ? e.message : 'the provider reported an error'
  const status =
    e.code === 'rate_limit_exceeded' || e.type === 'rate_limit_exceeded'
      ? 429
      : e.type === 'invalid_request_error'
        ? 400
        : 500
  return statusError(scope.op, status, message, null)
}

/**
 * A {@link LanguageModel} over an OpenAI-compatible chat-completions endpoint
 * (`POST {baseURL}/chat/completions`, `Authorization: Bearer <apiKey>`), streaming with SSE.
 */
export function openAICompatible(options: OpenAICompatibleOptions): LanguageModel {
  checkProviderOptions(options)
  const url = endpoint(options.baseURL, 'chat/completions')
  const auth: Record<string, string> =
    options.apiKey !== undefined ? { authorization: `Bearer ${options.apiKey}` } : {}
  const timeoutMs = options.timeoutMs ?? PROVIDER_DEFAULTS.timeoutMs
  const capabilities = { ...OPENAI_CAPABILITIES, ...options.capabilities }
  const op = 'chat completions'

  async function generate(
    request: ModelRequest,
    callOptions: ModelCallOptions = {},
  ): Promise<ModelResponse> {
    const scope = new RequestScope(op, timeoutMs, callOptions.signal)
    try {
      const response = await postJson(
        options,
        scope,
        url,
        auth,
        openAIRequestBody(options.model, request, false),
      )
      const json = (await readJson(response, scope)) as Json
      if (json.error !== undefined) throw chunkError(scope, json.error)
      const choice = (Array.isArray(json.choices) ? json.choices[0] : undefined) as
        { message?: Json; finish_reason?: unknown } | undefined
      if (choice?.message === undefined)
        throw new IsoagentError('transport', `${op}: the response has no choice`, { data: { op } })
      const message = choice.message
      const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as Json[]) : []
      return {
        text: typeof message.content === 'string' ? message.content : '',
        toolCalls: calls.map((c, i) => {
          const fn = (c.function ?? {}) as { name?: unknown; arguments?: unknown }
          return {
            id: typeof c.id === 'string' ? c.id : `call_${i}`,
            name: typeof fn.name === 'string' ? fn.name : '',
            arguments: typeof fn.arguments === 'string' ? fn.arguments : '',
          }
        }),
        finishReason: finishOf(choice.finish_reason),
        usage: usageOf(json.usage),
      }
    } catch (error) {
      throw scope.failure(error, 'the request failed')
    } finally {
      scope.dispose()
    }
  }

  async function* stream(
    request: ModelRequest,
    callOptions: ModelCallOptions = {},
  ): AsyncGenerator<ModelStreamPart> {
    const scope = new RequestScope(op, timeoutMs, callOptions.signal)
    try {
      const response = await postJson(
        options,
        scope,
        url,
        auth,
        openAIRequestBody(options.model, request, true),
      )
      const calls = new Map<number, ModelToolCall>()
      let finishReason: ModelFinishReason | undefined
      let usage: ModelUsage = { inputTokens: 0, outputTokens: 0 }
      let done = false
      for await (const event of sseEvents(response, scope)) {
        if (event.data === '[DONE]') {
          done = true
          break
        }
        const chunk = parseChunk(scope, event.data)
        if (chunk.error !== undefined) throw chunkError(scope, chunk.error)
        if (chunk.usage !== undefined && chunk.usage !== null) usage = usageOf(chunk.usage)
        const choices = Array.isArray(chunk.choices) ? (chunk.choices as Json[]) : []
        for (const choice of choices) {
          const delta = (choice.delta ?? {}) as { content?: unknown; tool_calls?: unknown }
          if (typeof delta.content === 'string' && delta.content !== '')
            yield { type: 'text_delta', delta: delta.content }
          if (Array.isArray(delta.tool_calls)) {
            for (const raw of delta.tool_calls as Json[]) {
              const index = typeof raw.index === 'number' ? raw.index : calls.size
              const fn = (raw.function ?? {}) as { name?: unknown; arguments?: unknown }
              const argumentsDelta = typeof fn.arguments === 'string' ? fn.arguments : ''
              let call = calls.get(index)
              const part: ModelStreamPart = { type: 'tool_call_delta', index, argumentsDelta }
              if (call === undefined) {
                call = {
                  id: typeof raw.id === 'string' ? raw.id : `call_${index}`,
                  name: typeof fn.name === 'string' ? fn.name : '',
                  arguments: '',
                }
                calls.set(index, call)
                part.id = call.id
                part.name = call.name
              }
              call.arguments += argumentsDelta
              yield part
            }
          }
          if (choice.finish_reason !== undefined && choice.finish_reason !== null)
            finishReason = finishOf(choice.finish_reason)
        }
      }
      if (!done && finishReason === undefined) throw cutStream(scope)
      for (const [index, call] of [...calls].sort((a, b) => a[0] - b[0]))
        yield { type: 'tool_call', index, call }
      yield { type: 'finish', finishReason: finishReason ?? 'other', usage }
    } catch (error) {
      throw scope.failure(error, 'the stream failed')
    } finally {
      scope.dispose()
    }
  }

  return {
    provider: options.provider ?? 'openai-compatible',
    modelId: options.model,
    capabilities,
    generate,
    stream,
  }
}
