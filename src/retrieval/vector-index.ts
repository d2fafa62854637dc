import type { FileChunk } from './chunker.ts'

/** One indexed chunk: where it is, what it said, and its slot in the vector buffer. */
export interface ChunkRecord extends FileChunk {
  path: string
  /** `sha256:` of the whole file when it was embedded. */
  digest: string
  slot: number
  /** Names the chunk defines, from a parser; absent: no parser for it (the regex decides). */
  symbols?: readonly string[]
}

/** A chunk with its cosine similarity to a query. */
export interface ScoredChunk {
  record: ChunkRecord
  score: number
}

/**
 * The session's vectors: unit-length Float32 vectors in one contiguous, growable buffer (a slot
 * per chunk; freed slots are reused), and the chunk records by file. Files are published whole:
 * {@link VectorIndex.publish} swaps a file's records in one synchronous step. Ranking is exact
 * cosine over every live vector (no approximate index).
 */
export class VectorIndex {
  /** Vector length (0 until the first publish when the embedder did not know it). */
  dimension: number
  private buffer: Float32Array
  private readonly bySlot: (ChunkRecord | undefined)[] = []
  private readonly free: number[] = []
  private readonly files = new Map<string, ChunkRecord[]>()
  private live = 0

  constructor(dimension: number, initialSlots = 64) {
    this.dimension = dimension
    this.buffer = new Float32Array(dimension * initialSlots)
  }

  /** Live vectors. */
  get records(): number {
    return this.live
  }

  /** Bytes held by the vector buffer. */
  get bytes(): number {
    return this.buffer.byteLength
  }

  /** Files with published chunks. */
  get fileCount(): number {
    return this.files.size
  }

  /** A file's records (in file order), if published. */
  file(path: string): readonly ChunkRecord[] | undefined {
    return this.files.get(path)
  }

  /** Every published file's path. */
  paths(): IterableIterator<string> {
    return this.files.keys()
  }

  /** Replace a file's chunks and vectors (vectors in chunk order) at once. */
  publish(
    path: string,
    digest: string,
    chunks: readonly (FileChunk & { symbols?: readonly string[] })[],
    vectors: readonly Float32Array[],
  ): void {
    if (this.dimension === 0 && vectors.length > 0) this.dimension = vectors[0]!.length
    if (vectors.some((v) => v.length !== this.dimension))
      throw new Error(`vectors of ${path} are not ${this.dimension}-dimensional`)
    this.remove(path)
    const records = chunks.map((chunk, i) => {
      const slot = this.allocate()
      this.write(slot, vectors[i]!)
      const record: ChunkRecord = { ...chunk, path, digest, slot }
      this.bySlot[slot] = record
      this.live++
      return record
    })
    this.files.set(path, records)
  }

  /** Drop a file's chunks. */
  remove(path: string): void {
    const old = this.files.get(path)
    if (old === undefined) return
    for (const r of old) {
      this.bySlot[r.slot] = undefined
      this.free.push(r.slot)
      this.live--
    }
    this.files.delete(path)
  }

  /** The `k` chunks most similar to `query` (any length-`dimension` vector) that pass `keep`. */
  search(
    query: Float32Array,
    k: number,
    keep: (r: ChunkRecord) => boolean = () => true,
  ): ScoredChunk[] {
    const d = this.dimension
    if (query.length !== d) return []
    const q = normalized(query)
    const buf = this.buffer
    const top: ScoredChunk[] = []
    const slots = this.bySlot.length
    // The dot product first (the hot loop is the plain one); a record and its filter are looked
    // at only when the score would enter the top k. Free slots score too, then fall out there.
    for (let slot = 0; slot < slots; slot++) {
      let dot = 0
      const base = slot * d
      for (let i = 0; i < d; i++) dot += q[i]! * buf[base + i]!
      if (top.length >= k && dot <= top[top.length - 1]!.score) continue
      const record = this.bySlot[slot]
      if (record !== undefined && keep(record)) insertRanked(top, { record, score: dot }, k)
    }
    return top
  }

  /**
   * Shrink the buffer to the slots in use (growth doubles it; the builder trims when a build
   * ends, so an index at rest holds its vectors and the free slots, nothing more).
   */
  trim(): void {
    const used = this.bySlot.length * this.dimension
    if (this.buffer.length > used) this.buffer = this.buffer.slice(0, used)
  }

  /** Let go of every vector and record. */
  clear(): void {
    this.buffer = new Float32Array(0)
    this.bySlot.length = 0
    this.free.length = 0
    this.files.clear()
    this.live = 0
  }

  private allocate(): number {
    const reused = this.free.pop()
    if (reused !== undefined) return reused
    const slot = this.bySlot.length
    this.bySlot.push(undefined)
    if ((slot + 1) * this.dimension > this.buffer.length) {
      // doubling keeps growth amortised; the buffer is one contiguous Float32Array
      const grown = new Float32Array(Math.max(this.dimension, this.buffer.length * 2))
      grown.set(this.buffer)
      this.buffer = grown
    }
    return slot
  }

  /** Write `vector` scaled to unit length into its slot (as {@link normalized}, no copy). */
  private write(slot: number, vector: Float32Array): void {
    let sum = 0
    for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!
    if (sum === 0 || Math.abs(sum - 1) < 1e-6) return this.buffer.set(vector, slot * this.dimension)
    const scale = 1 / Math.sqrt(sum)
    const buf = this.buffer
    const base = slot * this.dimension
    for (let i = 0; i < vector.length; i++) buf[base + i] = vector[i]! * scale
  }
}

/** `v` scaled to unit length (a zero vector stays zero). */
export function normalized(v: Float32Array): Float32Array {
  let sum = 0
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!
  if (sum === 0 || Math.abs(sum - 1) < 1e-6) return v
  const scale = 1 / Math.sqrt(sum)
  const out = new Float32Array(v.length)
  for (let i = 0; i < v.length; i++) out[i] = v[i]! * scale
  return out
}

/** Keep `top` sorted by score (desc; ties by path then start byte), at most `k` long. */
function insertRanked(top: ScoredChunk[], item: ScoredChunk, k: number): void {
  let at = top.length
  while (at > 0 && before(item, top[at - 1]!)) at--
  top.splice(at, 0, item)
  if (top.length > k) top.pop()
}

function before(a: ScoredChunk, b: ScoredChunk): boolean {
  if (a.score !== b.score) return a.score > b.score
  if (a.record.path !== b.record.path) return a.record.path < b.record.path
  return a.record.startByte < b.record.startByte
}
