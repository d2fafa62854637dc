import { IsoagentError } from '../errors.ts'
import {
  embeddingFailure,
  type EmbeddingFailureKind,
  type EmbeddingInput,
  type EmbeddingModel,
} from './embedding-model.ts'

/**
 * The part of a Workers AI binding (`env.AI`, wrangler.toml `[ai] binding = "AI"`) the embedder
 * uses: `run(model, { text: string[] })` answering `{ shape: [n, d], data: number[][] }`.
 */
export interface WorkersAIBinding {
  run(model: string, inputs: { text: string[] }): Promise<unknown>
}

/** Options of {@link workersAIEmbeddings}. */
export interface WorkersAIEmbeddingsOptions {
  /** The `AI` binding. */
  binding: WorkersAIBinding
  /** A Workers AI text-embedding model (default `@cf/baai/bge-base-en-v1.5`). */
  model?: string
  /** Vector length, checked on every answer (default: the model's if known, else learned). */
  dimension?: number
}

/** The Workers AI default embedding model. */
export const WORKERS_AI_DEFAULT_EMBEDDING_MODEL = '@cf/baai/bge-base-en-v1.5'

const KNOWN_DIMENSIONS: Record<string, number> = {
  '@cf/baai/bge-small-en-v1.5': 384,
  '@cf/baai/bge-base-en-v1.5': 768,
  '@cf/baai/bge-large-en-v1.5': 1024,
  '@cf/baai/bge-m3': 1024,
}

/**
 * Types a failure the binding threw, by its message (Workers AI names internal error codes in
 * it): capacity or rate limits (3040, 3036, 429) → `rate_limited`, time-outs → `timeout`, refused
 * input (5006, 5007, 400, "invalid") → `rejected`, anything else → `unavailable`.
 */
export function workersAIFailureKind(message: string): EmbeddingFailureKind {
  if (/\b(3040|3036|429)\b|capacity|rate.?limit|too many/i.test(message)) return 'rate_limited'
  if (/time[ds]?.?out|\b(3007|3008)\b/i.test(message)) return 'timeout'
  if (/\b(5004|5006|5007|400|413)\b|invalid|validation|too (long|large)/i.test(message))
    return 'rejected'
  return 'unavailable'
}

/** The answer's vectors, in input order (the binding echoes no ids). */
function vectorsOf(answer: unknown, inputs: readonly EmbeddingInput[]) {
  const data = (answer as { data?: unknown } | null)?.data
  if (!Array.isArray(data) || data.some((row) => !Array.isArray(row)))
    throw embeddingFailure('invalid_response', 'Workers AI answered no data: number[][]')
  if (data.length !== inputs.length)
    throw embeddingFailure(
      'invalid_response',
      `Workers AI answered ${data.length} vectors for ${inputs.length} inputs`,
    )
  return (data as number[][]).map((values, i) => ({ id: inputs[i]!.id, values }))
}

/**
 * An {@link EmbeddingModel} over the Workers AI binding: the inputs of a call go as one
 * `ai.run(model, { text })`. The deadline and retries are the index's (the binding takes no
 * signal: a call past its deadline is abandoned). Failures are typed
 * ({@link workersAIFailureKind}); a malformed answer is `invalid_response`.
 */
export function workersAIEmbeddings(options: WorkersAIEmbeddingsOptions): EmbeddingModel {
  const binding = options.binding
  if (typeof binding !== 'object' || binding === null || typeof binding.run !== 'function')
    throw new IsoagentError('invalid_argument', 'workersAIEmbeddings needs the AI binding')
  const model = options.model ?? WORKERS_AI_DEFAULT_EMBEDDING_MODEL
  const d = options.dimension ?? KNOWN_DIMENSIONS[model]
  if (d !== undefined && (!Number.isInteger(d) || d < 1 || d > 65536))
    throw new IsoagentError('invalid_argument', 'dimension must be an integer 1..65536')
  const adapter = {
    provider: 'workers-ai',
    model,
    dimension: d ?? 0,
    normalization: 'none' as const,
    async embed(inputs: readonly EmbeddingInput[], { signal }: { signal: AbortSignal }) {
      if (signal.aborted) throw embeddingFailure('cancelled', 'cancelled')
      let answer: unknown
      try {
        answer = await binding.run(model, { text: inputs.map((i) => i.text) })
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        throw embeddingFailure(workersAIFailureKind(message), `Workers AI: ${message}`)
      }
      const vectors = vectorsOf(answer, inputs)
      if (adapter.dimension === 0 && vectors[0] !== undefined)
        adapter.dimension = vectors[0].values.length
      return { vectors }
    },
  }
  return adapter
}
