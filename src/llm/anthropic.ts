import { IsoagentError } from '../errors.ts'
import { anthropicRequestBody } from './anthropic-request.ts'
import { anthropicResponse, type Json } from './anthropic-response.ts'
import { anthropicStreamParts } from './anthropic-stream.ts'
import type {
  LanguageModel,
  ModelCallOptions,
  ModelCapabilities,
  ModelRequest,
  ModelResponse,
  ModelStreamPart,
} from './language-model.ts'
import {
  PROVIDER_DEFAULTS,
  RequestScope,
  checkProviderOptions,
  endpoint,
  postJson,
  readJson,
  type ProviderHttpOptions,
} from './provider-http.ts'

export { anthropicRequestBody } from './anthropic-request.ts'

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
      return anthropicResponse(scope, (await readJson(response, scope)) as Json)
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
      yield* anthropicStreamParts(response, scope)
    } catch (error) {
      throw scope.failure(error, 'the stream failed')
    } finally {
      scope.dispose()
    }
  }

  return { provider: 'anthropic', modelId: options.model, capabilities, generate, stream }
}
