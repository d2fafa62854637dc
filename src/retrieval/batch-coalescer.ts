import type { EmbeddingInput, EmbeddingModel } from './embedding-model.ts'
import { embedBatch } from './embed-batches.ts'
import type { RetrievalLimits } from './retrieval-options.ts'

interface Pending {
  inputs: readonly EmbeddingInput[]
  bytes: number
  resolve(vectors: Float32Array[]): void
  reject(error: unknown): void
}

/**
 * Packs the embedding requests of files indexed at the same time into shared calls (≤ 64 inputs
 * / 256 KiB each), so many small files do not cost a call each. Each request is at most one
 * batch itself. When a shared call fails (after its retries), each file's request is sent again
 * on its own: a file that cannot be embedded fails alone.
 *
 * Requests wait one timer tick for others to join them, unless they already fill a call. (Sending
 * at once whenever no call is in flight was measured: with a zero-latency embedder it made 7×
 * the calls and cost more CPU than the ticks it saved; see docs/benchmarks.md.)
 */
export class BatchCoalescer {
  private pending: Pending[] = []
  private pendingInputs = 0
  private pendingBytes = 0
  private timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly model: EmbeddingModel,
    private readonly limits: RetrievalLimits,
    private readonly signal: AbortSignal,
    private readonly dimension: () => number | undefined,
  ) {}

  /** The vectors of `inputs` (one batch at most, `bytes` of text), in input order. */
  embed(inputs: readonly EmbeddingInput[], bytes: number): Promise<Float32Array[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ inputs, bytes, resolve, reject })
      this.pendingInputs += inputs.length
      this.pendingBytes += bytes
      if (
        this.pendingInputs >= this.limits.batchInputs ||
        this.pendingBytes >= this.limits.batchBytes
      )
        this.flush()
      else this.timer ??= setTimeout(() => this.flush(), 0)
    })
  }

  /** Send every waiting request, packed into calls. */
  private flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    const all = this.pending
    this.pending = []
    this.pendingInputs = 0
    this.pendingBytes = 0
    let group: Pending[] = []
    let inputs = 0
    let bytes = 0
    for (const p of all) {
      if (
        group.length > 0 &&
        (inputs + p.inputs.length > this.limits.batchInputs ||
          bytes + p.bytes > this.limits.batchBytes)
      ) {
        void this.send(group)
        group = []
        inputs = 0
        bytes = 0
      }
      group.push(p)
      inputs += p.inputs.length
      bytes += p.bytes
    }
    if (group.length > 0) void this.send(group)
  }

  private async send(group: Pending[]): Promise<void> {
    const call = (inputs: readonly EmbeddingInput[]) =>
      embedBatch(this.model, inputs, this.limits, this.signal, this.dimension())
    if (group.length === 1) {
      const only = group[0]!
      return call(only.inputs).then(only.resolve, only.reject)
    }
    try {
      const vectors = await call(group.flatMap((p) => p.inputs))
      let at = 0
      for (const p of group) {
        p.resolve(vectors.slice(at, at + p.inputs.length))
        at += p.inputs.length
      }
    } catch {
      await Promise.all(group.map((p) => call(p.inputs).then(p.resolve, p.reject)))
    }
  }
}
