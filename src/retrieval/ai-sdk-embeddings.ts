import type { EmbeddingModelV3 } from '@ai-sdk/provider'
import { IsoagentError } from '../errors.ts'
import { failureOf } from '../llm/ai-sdk.ts'
import type { EmbeddingInput, EmbeddingModel } from './embedding-model.ts'
import { asEmbeddingFailure } from './openai-compatible-embeddings.ts'

/** Options of {@link fromAISDKEmbeddings}. */
export interface FromAISDKEmbeddingsOptions {
  /** Vector length, checked on every answer (default: learned from the first answer). */
  dimension?: number
}

/**
 * An {@link EmbeddingModel} over an AI SDK `EmbeddingModelV3` (`@ai-sdk/provider@3`, e.g.
 * `openai.embedding('text-embedding-3-small')`). Only the model's `doEmbed` is used: neither `ai`
 * nor `@ai-sdk/provider` is loaded at run time. Failures are typed as for
 * `openAICompatibleEmbeddings` (429 → `rate_limited` with `Retry-After`, 5xx → `unavailable`,
 * other 4xx → `rejected`).
 */
export function fromAISDKEmbeddings(
  model: EmbeddingModelV3,
  options: FromAISDKEmbeddingsOptions = {},
): EmbeddingModel {
  if (typeof model !== 'object' || model === null || typeof model.doEmbed !== 'function')
    throw new IsoagentError(
      'invalid_argument',
      'fromAISDKEmbeddings needs an AI SDK EmbeddingModelV3',
    )
  const d = options.dimension
  if (d !== undefined && (!Number.isInteger(d) || d < 1 || d > 65536))
    throw new IsoagentError('invalid_argument', 'dimension must be an integer 1..65536')
  const adapter = {
    provider: `ai-sdk:${model.provider}`,
    model: model.modelId,
    dimension: d ?? 0,
    normalization: 'none' as const,
    async embed(inputs: readonly EmbeddingInput[], { signal }: { signal: AbortSignal }) {
      let result
      try {
        result = await model.doEmbed({ values: inputs.map((i) => i.text), abortSignal: signal })
      } catch (error) {
        throw asEmbeddingFailure(failureOf(error, 'embeddings', signal))
      }
      const vectors = result.embeddings.map((values, i) => ({
        id: inputs[i]?.id ?? `#${i}`,
        values,
      }))
      if (adapter.dimension === 0 && vectors[0] !== undefined)
        adapter.dimension = vectors[0].values.length
      return { vectors }
    },
  }
  return adapter
}
