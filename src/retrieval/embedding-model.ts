import { IsoagentError } from '../errors.ts'

/** One text to embed, named by an id the answer must echo. */
export interface EmbeddingInput {
  id: string
  text: string
}

/** One vector of an answer: the id of its input and `dimension` finite numbers. */
export interface EmbeddingVector {
  id: string
  values: ArrayLike<number>
}

/**
 * The embedding port: what semantic retrieval needs of an embedding provider. Implementations:
 * `openAICompatibleEmbeddings` (`POST /embeddings`), or any object of this shape.
 *
 * Contract: `embed` answers exactly one vector per input id (no missing, no duplicate, no
 * unknown id), each of `dimension` finite numbers. Callers send at most 64 inputs / 256 KiB of
 * text per call. A failure is an {@link IsoagentError}; callers retry (twice) only the kinds
 * {@link isRetryableEmbeddingFailure} names: `timeout`, `rate_limited` and `unavailable`.
 */
export interface EmbeddingModel {
  /** Who serves it, e.g. `openai-compatible`. */
  readonly provider: string
  /** The model's name as the provider knows it. */
  readonly model: string
  /**
   * Length of every vector, 1..65536; 0 while not known yet (a provider that learns it from its
   * first answer, then sets it).
   */
  readonly dimension: number
  /** `unit` when the provider already answers unit-length vectors; `none` otherwise. */
  readonly normalization: 'none' | 'unit'
  embed(
    inputs: readonly EmbeddingInput[],
    options: { signal: AbortSignal },
  ): Promise<{ vectors: readonly EmbeddingVector[] }>
}

/** Why an embedding call failed (`data.kind` of the {@link IsoagentError}). */
export type EmbeddingFailureKind =
  'timeout' | 'rate_limited' | 'unavailable' | 'invalid_response' | 'rejected' | 'cancelled'

/** A typed embedding failure: code `timeout`, `rate_limited`, `cancelled` or `transport`. */
export function embeddingFailure(
  kind: EmbeddingFailureKind,
  message: string,
  retryAfterMs: number | null = null,
): IsoagentError {
  const code =
    kind === 'timeout' || kind === 'rate_limited' || kind === 'cancelled' ? kind : 'transport'
  return new IsoagentError(code, message, { data: { kind, retry_after_ms: retryAfterMs } })
}

/** The kind of an embedding failure (`unavailable` for an untyped throw). */
export function embeddingFailureKind(error: unknown): EmbeddingFailureKind {
  if (error instanceof IsoagentError) {
    const kind = error.data.kind
    if (typeof kind === 'string') return kind as EmbeddingFailureKind
    if (error.code === 'timeout' || error.code === 'rate_limited' || error.code === 'cancelled')
      return error.code
    if (error.code === 'invalid_argument') return 'rejected'
  }
  return 'unavailable'
}

/** Whether a failed embedding call may be retried: timeout, rate_limited or unavailable. */
export function isRetryableEmbeddingFailure(error: unknown): boolean {
  const kind = embeddingFailureKind(error)
  return kind === 'timeout' || kind === 'rate_limited' || kind === 'unavailable'
}

/** Checks the port's static facts (throws `invalid_argument`). */
export function checkEmbeddingModel(model: EmbeddingModel): void {
  if (typeof model !== 'object' || model === null || typeof model.embed !== 'function')
    throw new IsoagentError('invalid_argument', 'retrieval.embeddings must be an EmbeddingModel')
  if (!Number.isInteger(model.dimension) || model.dimension < 0 || model.dimension > 65536)
    throw new IsoagentError(
      'invalid_argument',
      'retrieval.embeddings.dimension must be 1..65536 (0: learned from the first answer)',
    )
  if (model.normalization !== 'none' && model.normalization !== 'unit')
    throw new IsoagentError(
      'invalid_argument',
      "retrieval.embeddings.normalization must be 'none' or 'unit'",
    )
}

/**
 * Checks an answer against its inputs and returns the vectors in input order, as Float32
 * (`dimension` 0: every vector as long as the first).
 * Throws `invalid_response` for a missing, duplicate or unknown id, a wrong dimension or a
 * non-finite value.
 */
export function checkEmbeddingAnswer(
  inputs: readonly EmbeddingInput[],
  answer: { vectors: readonly EmbeddingVector[] } | undefined,
  dimension: number,
): Float32Array[] {
  const vectors = answer?.vectors
  if (!Array.isArray(vectors))
    throw embeddingFailure('invalid_response', 'the embedder answered no vectors array')
  const wanted = new Map(inputs.map((input, i) => [input.id, i]))
  const out: (Float32Array | undefined)[] = inputs.map(() => undefined)
  if (dimension === 0) dimension = (vectors[0] as EmbeddingVector | undefined)?.values?.length ?? 0
  if (dimension < 1 || dimension > 65536)
    throw embeddingFailure(
      'invalid_response',
      `the embedder answered vectors of ${dimension} dimensions`,
    )
  for (const v of vectors as readonly EmbeddingVector[]) {
    const at = wanted.get(v?.id)
    if (at === undefined)
      throw embeddingFailure('invalid_response', `the embedder answered an unknown id ${v?.id}`)
    if (out[at] !== undefined)
      throw embeddingFailure('invalid_response', `the embedder answered id ${v.id} twice`)
    if (v.values?.length !== dimension)
      throw embeddingFailure(
        'invalid_response',
        `the embedder answered ${v.values?.length} dimensions for id ${v.id}; expected ${dimension}`,
      )
    const values = Float32Array.from(v.values)
    for (let i = 0; i < values.length; i++)
      if (!Number.isFinite(values[i]))
        throw embeddingFailure(
          'invalid_response',
          `the embedder answered a non-finite value for id ${v.id}`,
        )
    out[at] = values
  }
  const missing = out.findIndex((v) => v === undefined)
  if (missing !== -1)
    throw embeddingFailure(
      'invalid_response',
      `the embedder answered no vector for id ${inputs[missing]!.id}`,
    )
  return out as Float32Array[]
}
