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
import { toAnthropicTools } from './tool-specs.ts'

/** Options of {@link anthropic}. */
export interface AnthropicOptions extends ProviderHttpOptions {
  /** The model id sent as `model`. */
  model: string
  /** `max_tokens` when a request names none (the API requires one; default 4096). */
  maxOutputTokens?: number
  /** `anthropic-version` header (default `2023-06-01`). */
  version?: string
  /** What the endpoint supports, over the defaults (tools and forced tool use; no JSON modes). */
  capabilities?: Partial<ModelCapabilities>
}

const ANTHROPIC_CAPABILITIES: ModelCapabilities = {
  tools: true,
  toolChoice: true,
  jsonSchema: false,
  jsonObject: false,
  streaming: true,
}

/** Default `max_tokens`. */
export const ANTHROPIC_MAX_TOKENS = 4096

const FINISH: Record<string, ModelFinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  refusal: 'content_filter',
}

type Json = Record<string, unknown>
type Block = Json & { type: string }

function finishOf(value: unknown): ModelFinishReason {
  return (typeof value === 'string' ? FINISH[value] : undefined) ?? 'other'
}

function inputOf(args: string): unknown {
  try {
    const value = JSON.parse(args) as unknown
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value
  } catch {
    // an assistant turn with unparsable arguments is replayed with an empty input
  }
  return {}
}

/** The messages request body for `request`. */
export function anthropicRequestBody(
  model: string,
  request: ModelRequest,
  stream: boolean,
  maxTokens: number,
): Json {
  const system: string[] = []
  const messages: { role: 'user' | 'assistant'; content: Block[] }[] = []
  const push = (role: 'user' | 'assistant', blocks: Block[]) => {
    const last = messages[messages.length - 1]
    if (last !== undefined && last.role === role) last.content.push(...blocks)
    else messages.push({ role, content: blocks })
  }
  for (const m of request.messages) {
    switch (m.role) {
      case 'system':
        system.push(m.content)
        break
      case 'user':
        push('user', [{ type: 'text', text: m.content }])
        break
      case 'assistant': {
        const blocks: Block[] = m.content === '' ? [] : [{ type: 'text', text: m.content }]
        for (const c of m.toolCalls ?? [])
          blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: inputOf(c.arguments) })
        if (blocks.length > 0) push('assistant', blocks)
        break
      }
      case 'tool':
        push('user', [
          {
            type: 'tool_result',
            tool_use_id: m.toolCallId,
            content: m.content,
            ...(m.isError === true ? { is_error: true } : {}),
          },
        ])
        break
    }
  }
  const body: Json = {
    model,
    max_tokens: request.maxOutputTokens ?? maxTokens,
    messages,
  }
  if (system.length > 0) body.system = system.join('\n\n')
  if (request.tools !== undefined && request.tools.length > 0)
    body.tools = toAnthropicTools(request.tools)
  const choice = request.toolChoice
  if (choice !== undefined && request.tools !== undefined && request.tools.length > 0) {
    body.tool_choice =
      choice === 'auto'
        ? { type: 'auto' }
        : choice === 'none'
          ? { type: 'none' }
          : choice === 'required'
            ? { type: 'any' }
            : { type: 'tool', name: choice.name }
  }
  if (request.temperature !== undefined) body.temperature = request.temperature
  if (stream) body.stream = true
  return body
}

function eventError(scope: RequestScope, error: unknown): IsoagentError {
  const e = (error ?? {}) as { type?: unknown; message?: unknown }
  const message = typeof e.message === 'string' ? e.message : 'the provider reported an error'
  const status =
    e.type === 'rate_limit_error'
      ? 429
      : e.type === 'invalid_request_error'
        ? 400
        : e.type === 'overloaded_error'
          ? 529
          : 500
  return statusError(scope.op, status, message, null)
}

/**
 * A {@link LanguageModel} over the Anthropic messages API (`POST {baseURL}/messages`, headers
 * `x-api-key` and `anthropic-version`), streaming with SSE. `baseURL` is e.g.
 * `https://api.anthropic.com/v1`. System messages become the top-level `system` field.
 */
export function anthropic(options: AnthropicOptions): LanguageModel {
  checkProviderOptions(options)
  const maxTokens = options.maxOutputTokens ?? ANTHROPIC_MAX_TOKENS
  if (!Number.isInteger(maxTokens) || maxTokens < 1)
    throw new IsoagentError('invalid_argument', 'maxOutputTokens must be a positive integer')
  const url = endpoint(options.baseURL, 'messages')
  const headers: Record<string, string> = {
    'anthropic-version': options.version ?? '2023-06-01',
    ...(options.apiKey !== undefined ? { 'x-api-key': options.apiKey } : {}),
  }
  const timeoutMs = options.timeoutMs ?? PROVIDER_DEFAULTS.timeoutMs
  const capabilities = { ...ANTHROPIC_CAPABILITIES, ...options.capabilities }
  const op = 'messages'

  function check(request: ModelRequest): void {
    const format = request.responseFormat
    if (format !== undefined && format.type !== 'text' && !capabilities.jsonSchema)
      throw new IsoagentError(
        'unsupported',
        `${op}: the Anthropic messages API has no ${format.type} response format; force a tool call instead`,
      )
  }

  async function generate(
    request: ModelRequest,
    callOptions: ModelCallOptions = {},
  ): Promise<ModelResponse> {
    check(request)
    const scope = new RequestScope(op, timeoutMs, callOptions.signal)
    try {
      const response = await postJson(
        options,
        scope,
        url,
        headers,
        anthropicRequestBody(options.model, request, false, maxTokens),
      )
      const json = (await readJson(response, scope)) as Json
      if (json.type === 'error') throw eventError(scope, json.error)
      const content = Array.isArray(json.content) ? (json.content as Block[]) : []
      const u = (json.usage ?? {}) as { input_tokens?: unknown; output_tokens?: unknown }
      return {
        text: content
          .filter((b) => b.type === 'text')
          .map((b) => (typeof b.text === 'string' ? b.text : ''))
          .join(''),
        toolCalls: content
          .filter((b) => b.type === 'tool_use')
          .map((b, i) => ({
            id: typeof b.id === 'string' ? b.id : `toolu_${i}`,
            name: typeof b.name === 'string' ? b.name : '',
            arguments: JSON.stringify(b.input ?? {}),
          })),
        finishReason: finishOf(json.stop_reason),
        usage: {
          inputTokens: typeof u.input_tokens === 'number' ? u.input_tokens : 0,
          outputTokens: typeof u.output_tokens === 'number' ? u.output_tokens : 0,
        },
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
    check(request)
    const scope = new RequestScope(op, timeoutMs, callOptions.signal)
    try {
      const response = await postJson(
        options,
        scope,
        url,
        headers,
        anthropicRequestBody(options.model, request, true, maxTokens),
      )
      const tools = new Map<number, { index: number; call: ModelToolCall }>()
      let finishReason: ModelFinishReason = 'other'
      const usage: ModelUsage = { inputTokens: 0, outputTokens: 0 }
      let done = false
      for await (const event of sseEvents(response, scope)) {
        const data = parseChunk(scope, event.data)
        switch (data.type) {
          case 'message_start': {
            const u = ((data.message as Json | undefined)?.usage ?? {}) as Json
            if (typeof u.input_tokens === 'number') usage.inputTokens = u.input_tokens
            if (typeof u.output_tokens === 'number') usage.outputTokens = u.output_tokens
            break
          }
          case 'content_block_start': {
            const block = (data.content_block ?? {}) as Block
            const at = typeof data.index === 'number' ? data.index : tools.size
            if (block.type === 'tool_use') {
              const call: ModelToolCall = {
                id: typeof block.id === 'string' ? block.id : `toolu_${tools.size}`,
                name: typeof block.name === 'string' ? block.name : '',
                arguments: '',
              }
              const index = tools.size
              tools.set(at, { index, call })
              yield {
                type: 'tool_call_delta',
                index,
                id: call.id,
                name: call.name,
                argumentsDelta: '',
              }
            } else if (
              block.type === 'text' &&
              typeof block.text === 'string' &&
              block.text !== ''
            ) {
              yield { type: 'text_delta', delta: block.text }
            }
            break
          }
          case 'content_block_delta': {
            const delta = (data.delta ?? {}) as Json
            if (delta.type === 'text_delta' && typeof delta.text === 'string') {
              if (delta.text !== '') yield { type: 'text_delta', delta: delta.text }
            } else if (
              delta.type === 'input_json_delta' &&
              typeof delta.partial_json === 'string'
            ) {
              const tool = tools.get(typeof data.index === 'number' ? data.index : -1)
              if (tool !== undefined) {
                tool.call.arguments += delta.partial_json
                yield {
                  type: 'tool_call_delta',
                  index: tool.index,
                  argumentsDelta: delta.partial_json,
                }
              }
            }
            break
          }
          case 'content_block_stop': {
            const tool = tools.get(typeof data.index === 'number' ? data.index : -1)
            if (tool !== undefined) {
              if (tool.call.arguments === '') tool.call.arguments = '{}'
              yield { type: 'tool_call', index: tool.index, call: tool.call }
            }
            break
          }
          case 'message_delta': {
            const delta = (data.delta ?? {}) as Json
            if (delta.stop_reason !== undefined && delta.stop_reason !== null)
              finishReason = finishOf(delta.stop_reason)
            const u = (data.usage ?? {}) as Json
            if (typeof u.output_tokens === 'number') usage.outputTokens = u.output_tokens
            if (typeof u.input_tokens === 'number') usage.inputTokens = u.input_tokens
            break
          }
          case 'message_stop':
            done = true
            break
          case 'error':
            throw eventError(scope, data.error)
          default:
            break
        }
        if (done) break
      }
      if (!done) throw cutStream(scope)
      yield { type: 'finish', finishReason, usage }
    } catch (error) {
      throw scope.failure(error, 'the stream failed')
    } finally {
      scope.dispose()
    }
  }

  return { provider: 'anthropic', modelId: options.model, capabilities, generate, stream }
}
