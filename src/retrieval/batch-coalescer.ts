import type { EmbeddingInput, EmbeddingModel } from './embedding-model.ts'
import { embedBatch } from './embed-batches.ts'
import type { RetrievalLimits } from './retrieval-options.ts'

interface Pending {
  inputs: readonly EmbeddingInput[]
  bytes: number
  resolve(vectors: Float32Array[]): void
  reject(error: unknown): void
}

const encoder = new TextEncoder()

/**
 * Packs the embedding requests of files indexed at the same time into shared calls (≤ 64 inputs
 * / 256 KiB each), so many small files do not cost a call each. Each request is at most one
 * batch itself. When a shared call fails (after its retries), each file's request is sent again
 * on its own: a file that cannot be embedded fails alone.
 */
export class BatchCoalescer {
  private pending: Pending[] = []
  private scheduled = false

  constructor(
    private readonly model: EmbeddingModel,
    private readonly limits: RetrievalLimits,
    private readonly signal: AbortSignal,
    private readonly dimension: () => number | undefined,
  ) {}

  /** The vectors of `inputs` (one batch at most), in input order. */
  embed(inputs: readonly EmbeddingInput[]): Promise<Float32Array[]> {
    const bytes = inputs.reduce((n, i) => n + encoder.encode(i.text).length, 0)
    return new Promise((resolve, reject) => {
      this.pending.push({ inputs, bytes, resolve, reject })
      if (!this.scheduled) {
        this.scheduled = true
        setTimeout(() => this.flush(), 0)
      }
    })
  }

  private flush(): void {
    this.scheduled = false
    const all = this.pending
    this.pending = []
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
