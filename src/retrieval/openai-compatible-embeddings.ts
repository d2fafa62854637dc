import { IsoagentError } from '../errors.ts'
import {
  PROVIDER_DEFAULTS,
  RequestScope,
  checkProviderOptions,
  endpoint,
  postJson,
  readJson,
} from '../llm/provider-http.ts'
import {
  embeddingFailure,
  type EmbeddingInput,
  type EmbeddingModel,
  type EmbeddingVector,
} from './embedding-model.ts'

/** Options of {@link openAICompatibleEmbeddings}. */
export interface OpenAICompatibleEmbeddingsOptions {
  /** Root of the API, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  baseURL: string
  /** Sent as `Authorization: Bearer <apiKey>` when given. */
  apiKey?: string
  model: string
  /**
   * Vector length: sent as `dimensions` (models that can shorten their vectors honour it) and
   * checked on every answer. Without it the length is learned from the first answer.
   */
  dimensions?: number
  /** `float` (default: the field is not sent) or `base64` (little-endian float32). */
  encodingFormat?: 'float' | 'base64'
  /** Extra request headers. */
  headers?: Record<string, string>
  /** The fetch to use (default `globalThis.fetch`). */
  fetch?: typeof fetch
  /** Deadline (ms) of one request (default 60000). */
  timeoutMs?: number
}

const OP = 'embeddings'

/** A base64 string of little-endian float32s as numbers. */
function decodeBase64Floats(text: string): Float32Array {
  const binary = atob(text)
  if (binary.length % 4 !== 0)
    throw embeddingFailure(
      'invalid_response',
      `${OP}: a base64 embedding is not a whole number of float32s`,
    )
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  const view = new DataView(bytes.buffer)
  const out = new Float32Array(bytes.length / 4)
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true)
  return out
}

/** The typed embedding failure (`data.kind`) of a provider error. */
export function asEmbeddingFailure(error: IsoagentError): IsoagentError {
  const retryAfter =
    typeof error.data.retry_after_ms === 'number' ? error.data.retry_after_ms : null
  switch (error.code) {
    case 'rate_limited':
      return embeddingFailure('rate_limited', error.message, retryAfter)
    case 'timeout':
      return embeddingFailure('timeout', error.message)
    case 'cancelled':
      return embeddingFailure('cancelled', error.message)
    case 'invalid_argument':
      return embeddingFailure('rejected', error.message)
    default:
      return embeddingFailure('unavailable', error.message)
  }
}

/** The answer's vectors, mapped back to input ids by `index`. */
function vectorsOf(json: unknown, inputs: readonly EmbeddingInput[]): EmbeddingVector[] {
  const data = (json as { data?: unknown } | null)?.data
  if (!Array.isArray(data))
    throw embeddingFailure('invalid_response', `${OP}: the answer has no data array`)
  return data.map((item: unknown) => {
    const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown }
    const input = typeof index === 'number' && Number.isInteger(index) ? inputs[index] : undefined
    if (input === undefined)
      throw embeddingFailure(
        'invalid_response',
        `${OP}: an embedding has a bad index ${String(index)}`,
      )
    if (typeof embedding === 'string')
      return { id: input.id, values: decodeBase64Floats(embedding) }
    if (!Array.isArray(embedding) || embedding.some((v) => typeof v !== 'number'))
      throw embeddingFailure('invalid_response', `${OP}: an embedding is not an array of numbers`)
    return { id: input.id, values: embedding as number[] }
  })
}

/**
 * An {@link EmbeddingModel} over an OpenAI-compatible `POST /embeddings` (OpenAI, Ollama, vLLM,
 * LM Studio, llama.cpp): one request per call, answers of either encoding accepted. Failures are
 * typed: `rate_limited` (429, with the server's `Retry-After`), `unavailable` (5xx, connection),
 * `timeout`, `rejected` (other 4xx), `invalid_response`. The caller retries (the session's index
 * builder does, twice).
 */
export function openAICompatibleEmbeddings(
  options: OpenAICompatibleEmbeddingsOptions,
): EmbeddingModel {
  checkProviderOptions({ ...options, maxRetries: 0 })
  const d = options.dimensions
  if (d !== undefined && (!Number.isInteger(d) || d < 1 || d > 65536))
    throw new IsoagentError('invalid_argument', 'dimensions must be an integer 1..65536')
  const url = endpoint(options.baseURL, 'embeddings')
  const headers: Record<string, string> = options.apiKey
    ? { authorization: `Bearer ${options.apiKey}` }
    : {}
  const http = { ...options, maxRetries: 0, timeoutMs: options.timeoutMs ?? 60_000 }
  const model = {
    provider: 'openai-compatible',
    model: options.model,
    dimension: d ?? 0,
    normalization: 'none' as const,
    async embed(inputs: readonly EmbeddingInput[], { signal }: { signal: AbortSignal }) {
      const body: Record<string, unknown> = {
        model: options.model,
        input: inputs.map((i) => i.text),
      }
      if (d !== undefined) body.dimensions = d
      if (options.encodingFormat !== undefined) body.encoding_format = options.encodingFormat
      const scope = new RequestScope(OP, http.timeoutMs ?? PROVIDER_DEFAULTS.timeoutMs, signal)
      try {
        const response = await postJson(http, scope, url, headers, body)
        const vectors = vectorsOf(await readJson(response, scope), inputs)
        if (model.dimension === 0 && vectors[0] !== undefined)
          model.dimension = vectors[0].values.length
        return { vectors }
      } catch (error) {
        if (IsoagentError.is(error) && typeof error.data.kind === 'string') throw error
        throw asEmbeddingFailure(scope.failure(error, 'the request failed'))
      } finally {
        scope.dispose()
      }
    },
  }
  return model
}
