import { IsoagentError } from '../errors.ts'
import { looksBinary } from '../text/bytes.ts'
import type { WorkspacePath } from '../workspace/workspace-path.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'
import { chunkFile, type FileChunk } from './chunker.ts'
import { BatchCoalescer } from './batch-coalescer.ts'
import { batchesOf, embedBatch, utf8Bytes } from './embed-batches.ts'
import { embeddingFailure, type EmbeddingModel } from './embedding-model.ts'
import { MAX_ELIGIBLE_FILE_BYTES, isEligiblePath } from './eligibility.ts'
import {
  resolveRetrievalOptions,
  type RetrievalLimits,
  type RetrievalOptions,
} from './retrieval-options.ts'
import type { RetrievalStatus } from './retrieval-status.ts'
import type { SymbolExtractor } from './symbol-extractor.ts'
import { VectorIndex } from './vector-index.ts'

/** Lists the workspace's files for indexing (the session gives a ripgrep-like walk). */
export type FileLister = (signal: AbortSignal) => AsyncIterable<WorkspacePath>

/** Files read and embedded at once (their requests share embedding calls). */
const WORKERS = 8
/** Larger files are not parsed (a parse blocks the thread): the regex reads them. */
const MAX_PARSE_BYTES = 256 * 1024
/** Times a file that keeps changing while embedded is re-queued before it counts as failed. */
const MAX_REQUEUES = 3

/**
 * A session's semantic retrieval: the in-memory index of embedded chunks, built in the
 * background from the moment {@link WorkspaceRetrieval.start} runs, each file published whole.
 * A file that changes while it is embedded is re-queued; a file that fails fails alone (phase
 * `degraded`). {@link WorkspaceRetrieval.close} frees the vectors (phase `closed`).
 */
export class WorkspaceRetrieval {
  readonly model: EmbeddingModel
  readonly readinessTimeoutMs: number
  readonly limits: RetrievalLimits
  readonly index: VectorIndex
  private readonly symbols: SymbolExtractor | undefined
  private symbolsFailed = false
  private readonly controller = new AbortController()
  private readonly queue: WorkspacePath[] = []
  private readonly queued = new Set<string>()
  private readonly eligible = new Set<string>()
  private readonly failed = new Map<string, string>()
  private readonly requeues = new Map<string, number>()
  private readonly again = new Set<string>()
  private readonly textBytes = new Map<string, number>()
  private totalTextBytes = 0
  private readonly coalescer: BatchCoalescer
  private walking = false
  private running = 0
  private closed = false
  private waiters = new Set<() => void>()

  constructor(
    private readonly workspace: WorkspaceServices,
    options: RetrievalOptions,
    private readonly listFiles: FileLister,
  ) {
    const resolved = resolveRetrievalOptions(options)
    this.model = resolved.embeddings
    this.readinessTimeoutMs = resolved.readinessTimeoutMs
    this.limits = resolved.limits
    this.symbols = resolved.symbols
    this.index = new VectorIndex(this.model.dimension)
    this.coalescer = new BatchCoalescer(this.model, this.limits, this.controller.signal, () =>
      this.dimension(),
    )
  }

  /** Start the background build (walk the workspace, queue the eligible files). */
  start(): void {
    if (this.walking || this.closed) return
    this.walking = true
    this.symbols?.ready().catch(() => (this.symbolsFailed = true))
    void this.walk().finally(() => {
      this.walking = false
      this.changed()
    })
  }

  /** The index's progress and size. */
  status(): RetrievalStatus {
    const eligibleFiles = this.eligible.size
    const indexedFiles = this.closed ? 0 : this.index.fileCount
    return {
      phase: this.phase(),
      eligibleFiles,
      indexedFiles,
      indexedChunks: this.closed ? 0 : this.index.records,
      coverageBps:
        eligibleFiles === 0
          ? this.building()
            ? 0
            : 10000
          : Math.floor((Math.min(indexedFiles, eligibleFiles) * 10000) / eligibleFiles),
      queueDepth: this.queue.length + this.running,
      failedFiles: this.failed.size,
      vectorRecords: this.closed ? 0 : this.index.records,
      vectorBytes: this.closed ? 0 : this.index.bytes,
      model: {
        provider: this.model.provider,
        model: this.model.model,
        dimension: this.model.dimension || this.index.dimension,
      },
    }
  }

  /**
   * What the symbol channel reads definitions with: the parser's engine (e.g. `tree_sitter`;
   * files without a grammar still use the regex), or `regex` when there is none or it cannot
   * load here.
   */
  symbolEngine(): string {
    return this.symbols === undefined || this.symbolsFailed ? 'regex' : this.symbols.engine
  }

  /** Why each failed file failed. */
  failures(): ReadonlyMap<string, string> {
    return this.failed
  }

  /**
   * Wait until the index is no longer building, at most `timeoutMs`. Resolves either way;
   * rejects with `cancelled` when `signal` aborts first.
   */
  async waitReady(timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (!this.building() || timeoutMs <= 0) return
    if (signal.aborted) throw new IsoagentError('cancelled', 'the search was cancelled')
    await new Promise<void>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        this.waiters.delete(check)
      }
      const check = (): void => {
        if (this.building()) return
        done()
        resolve()
      }
      const onAbort = (): void => {
        done()
        reject(
          new IsoagentError('cancelled', 'the search was cancelled while the index was building'),
        )
      }
      const timer = setTimeout(() => {
        done()
        resolve()
      }, timeoutMs)
      signal.addEventListener('abort', onAbort, { once: true })
      this.waiters.add(check)
    })
  }

  /** Embed a query (one input, same deadline and retries as the build). */
  async embedQuery(text: string, signal: AbortSignal): Promise<Float32Array> {
    const both = AbortSignal.any([signal, this.controller.signal])
    const [vector] = await embedBatch(
      this.model,
      [{ id: 'query', text }],
      this.limits,
      both,
      this.dimension(),
    )
    return vector!
  }

  /** Queue a file again (a stale hit, a change seen elsewhere). */
  requeue(path: WorkspacePath): void {
    if (this.closed || this.queued.has(path)) return
    this.failed.delete(path)
    this.queued.add(path)
    this.queue.push(path)
    this.pump()
  }

  /** Stop building and free the index (phase `closed`). */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.controller.abort()
    this.queue.length = 0
    this.queued.clear()
    this.index.clear()
    this.changed()
  }

  /** The vector length every answer must have (undefined: not known yet). */
  private dimension(): number | undefined {
    const d = this.model.dimension || this.index.dimension
    return d === 0 ? undefined : d
  }

  /** Whether the build is still running. */
  building(): boolean {
    return !this.closed && (this.walking || this.queue.length > 0 || this.running > 0)
  }

  private phase(): RetrievalStatus['phase'] {
    if (this.closed) return 'closed'
    if (this.building()) return 'building'
    return this.failed.size > 0 ? 'degraded' : 'ready'
  }

  private changed(): void {
    if (!this.closed && !this.building()) this.index.trim()
    for (const waiter of [...this.waiters]) waiter()
  }

  private async walk(): Promise<void> {
    const signal = this.controller.signal
    try {
      for await (const path of this.listFiles(signal)) {
        if (this.closed) return
        if (!isEligiblePath(path)) continue
        if (this.eligible.size >= this.limits.maxFiles) break
        this.eligible.add(path)
        this.requeue(path)
      }
    } catch {
      // A walk that fails midway keeps what it found; the files it missed are not indexed.
    }
  }

  private pump(): void {
    while (this.running < WORKERS && this.queue.length > 0 && !this.closed) {
      const path = this.queue.shift()!
      this.running++
      void this.indexFile(path)
        .catch((error: unknown) => {
          if (!this.closed)
            this.failed.set(path, error instanceof Error ? error.message : String(error))
        })
        .finally(() => {
          this.running--
          this.queued.delete(path)
          if (this.again.delete(path)) this.requeue(path)
          this.pump()
          this.changed()
        })
    }
  }

  private drop(path: string): void {
    this.eligible.delete(path)
    this.forget(path)
  }

  private forget(path: string): void {
    this.index.remove(path)
    this.totalTextBytes -= this.textBytes.get(path) ?? 0
    this.textBytes.delete(path)
  }

  /** Read, chunk, embed and publish one file; re-queue it if it changed meanwhile. */
  private async indexFile(path: WorkspacePath): Promise<void> {
    const before = await this.workspace.stat(path)
    if (before === undefined || before.kind !== 'file' || before.size > MAX_ELIGIBLE_FILE_BYTES)
      return this.drop(path)
    const bytes = await this.workspace.read(path)
    if (looksBinary(bytes)) return this.drop(path)
    this.eligible.add(path)
    const { digest, chunks: plain } = await chunkFile(path, bytes)
    const chunks = await this.withSymbols(path, bytes, plain)
    const text = bytes.length
    const otherText = this.totalTextBytes - (this.textBytes.get(path) ?? 0)
    const otherChunks = this.index.records - (this.index.file(path)?.length ?? 0)
    if (
      otherChunks + chunks.length > this.limits.maxChunks ||
      otherText + text > this.limits.maxTextBytes
    ) {
      this.forget(path)
      throw new IsoagentError('too_large', `${path}: over the index budget`)
    }
    const batches = batchesOf(
      chunks.map((c) => ({ id: c.id, text: c.text })),
      this.limits,
      // A chunk's text is its byte range decoded: the same length unless a malformed byte
      // became U+FFFD (3 bytes), when it is measured.
      chunks.map((c) => (c.text.includes('\uFFFD') ? utf8Bytes(c.text) : c.endByte - c.startByte)),
    )
    const vectors = (
      await Promise.all(batches.map((b) => this.coalescer.embed(b.inputs, b.bytes)))
    ).flat()
    if (this.closed) throw embeddingFailure('cancelled', 'closed')
    const after = await this.workspace.stat(path)
    if (after?.version !== before.version) return this.changedWhileEmbedding(path)
    this.forget(path)
    this.index.publish(path, digest, chunks, vectors)
    this.textBytes.set(path, text)
    this.totalTextBytes += text
    this.failed.delete(path)
    this.requeues.delete(path)
  }

  /** Each chunk with the names the parser found defined in its lines (none: unchanged). */
  private async withSymbols(
    path: string,
    bytes: Uint8Array,
    chunks: FileChunk[],
  ): Promise<(FileChunk & { symbols?: string[] })[]> {
    if (this.symbols === undefined || this.symbolsFailed || bytes.length > MAX_PARSE_BYTES)
      return chunks
    let found
    try {
      found = await this.symbols.extract(path, new TextDecoder().decode(bytes))
    } catch {
      return chunks // the parser failed on this file: the regex reads it
    }
    if (found === undefined) return chunks
    return chunks.map((chunk) => ({
      ...chunk,
      symbols: found
        .filter((d) => d.line >= chunk.startLine && d.line <= chunk.endLine)
        .map((d) => d.name),
    }))
  }

  private changedWhileEmbedding(path: WorkspacePath): void {
    const times = (this.requeues.get(path) ?? 0) + 1
    this.requeues.set(path, times)
    if (times > MAX_REQUEUES)
      throw new IsoagentError('io', `${path} kept changing while it was embedded`)
    this.again.add(path)
  }
}
