import { IsoagentError } from '../errors.ts'
import {
  checkEmbeddingAnswer,
  embeddingFailure,
  isRetryableEmbeddingFailure,
  type EmbeddingInput,
  type EmbeddingModel,
} from './embedding-model.ts'
import type { RetrievalLimits } from './retrieval-options.ts'

const encoder = new TextEncoder()

/** Split inputs into batches of ≤ `batchInputs` inputs and ≤ `batchBytes` text bytes. */
export function batchesOf(
  inputs: readonly EmbeddingInput[],
  limits: RetrievalLimits,
): EmbeddingInput[][] {
  const out: EmbeddingInput[][] = []
  let batch: EmbeddingInput[] = []
  let bytes = 0
  for (const input of inputs) {
    const size = encoder.encode(input.text).length
    if (
      batch.length > 0 &&
      (batch.length >= limits.batchInputs || bytes + size > limits.batchBytes)
    ) {
      out.push(batch)
      batch = []
      bytes = 0
    }
    batch.push(input)
    bytes += size
  }
  if (batch.length > 0) out.push(batch)
  return out
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(embeddingFailure('cancelled', 'cancelled'))
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(embeddingFailure('cancelled', 'cancelled'))
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/** One call with a deadline that holds even when the embedder ignores its signal. */
async function callOnce(
  model: EmbeddingModel,
  batch: readonly EmbeddingInput[],
  timeoutMs: number,
  signal: AbortSignal,
  dimension: number | undefined,
): Promise<Float32Array[]> {
  if (signal.aborted) throw embeddingFailure('cancelled', 'cancelled')
  const controller = new AbortController()
  const onAbort = (): void => controller.abort()
  signal.addEventListener('abort', onAbort, { once: true })
  let timer: ReturnType<typeof setTimeout> | undefined
  let onCancel: (() => void) | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort()
      reject(embeddingFailure('timeout', `the embedder did not answer within ${timeoutMs} ms`))
    }, timeoutMs)
    onCancel = () => reject(embeddingFailure('cancelled', 'cancelled'))
    signal.addEventListener('abort', onCancel, { once: true })
  })
  try {
    const answer = await Promise.race([model.embed(batch, { signal: controller.signal }), deadline])
    return checkEmbeddingAnswer(batch, answer, dimension ?? model.dimension)
  } finally {
    // Both listeners go: the signal (the session's index) outlives thousands of calls.
    clearTimeout(timer)
    signal.removeEventListener('abort', onAbort)
    if (onCancel !== undefined) signal.removeEventListener('abort', onCancel)
  }
}

/**
 * Embed one batch: checked answers in input order (`dimension`: the length every vector must
 * have, default the model's). Retries twice on `timeout`, `rate_limited`
 * and `unavailable` (waiting the embedder's `retry_after_ms`, else `retryDelayMs` doubled).
 */
export async function embedBatch(
  model: EmbeddingModel,
  batch: readonly EmbeddingInput[],
  limits: RetrievalLimits,
  signal: AbortSignal,
  dimension?: number,
): Promise<Float32Array[]> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await callOnce(model, batch, limits.embedTimeoutMs, signal, dimension)
    } catch (error) {
      if (signal.aborted) throw embeddingFailure('cancelled', 'cancelled')
      if (attempt >= 2 || !isRetryableEmbeddingFailure(error)) throw error
      const named = error instanceof IsoagentError ? error.data.retry_after_ms : null
      const wait =
        typeof named === 'number' ? Math.min(named, 30_000) : limits.retryDelayMs * 2 ** attempt
      await sleep(wait, signal)
    }
  }
}
