import { delay } from '../event-loop.ts'
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

/** UTF-8 bytes of a text. */
export function utf8Bytes(text: string): number {
  return encoder.encode(text).length
}

/**
 * Split inputs into batches of ≤ `batchInputs` inputs and ≤ `batchBytes` text bytes. `sizes`:
 * each input's text bytes when the caller knows them (a chunk's byte range), else measured.
 */
export function batchesOf(
  inputs: readonly EmbeddingInput[],
  limits: RetrievalLimits,
  sizes?: readonly number[],
): { inputs: EmbeddingInput[]; bytes: number }[] {
  const out: { inputs: EmbeddingInput[]; bytes: number }[] = []
  let batch: EmbeddingInput[] = []
  let bytes = 0
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i]!
    const size = sizes?.[i] ?? utf8Bytes(input.text)
    if (
      batch.length > 0 &&
      (batch.length >= limits.batchInputs || bytes + size > limits.batchBytes)
    ) {
      out.push({ inputs: batch, bytes })
      batch = []
      bytes = 0
    }
    batch.push(input)
    bytes += size
  }
  if (batch.length > 0) out.push({ inputs: batch, bytes })
  return out
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
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort: (() => void) | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort()
      reject(embeddingFailure('timeout', `the embedder did not answer within ${timeoutMs} ms`))
    }, timeoutMs)
    // One listener does both: stop the embedder's request and end the wait.
    onAbort = () => {
      controller.abort()
      reject(embeddingFailure('cancelled', 'cancelled'))
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    const answer = await Promise.race([model.embed(batch, { signal: controller.signal }), deadline])
    return checkEmbeddingAnswer(batch, answer, dimension ?? model.dimension)
  } finally {
    // The listener goes: the signal (the session's index) outlives thousands of calls.
    clearTimeout(timer)
    signal.removeEventListener('abort', onAbort!)
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
      if (!(await delay(wait, signal))) throw embeddingFailure('cancelled', 'cancelled')
    }
  }
}
