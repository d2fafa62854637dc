import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import {
  IsoagentError,
  type FileScanJob,
  type FileScanner,
  type FileScanOutcome,
  type TreeListOutcome,
  type TreeListRequest,
  type TreeScanOutcome,
  type TreeScanRequest,
  WorkspacePath,
} from '../../src/index.ts'
import type { DirHint, LocalFilesOptions } from './local-files.ts'
import { unpackOutcomes, unpackTree } from './scan-packing.ts'
import type {
  ScanWork,
  ScanWorkerReply,
  ScanWorkerRequest,
  ScanWorkerStart,
  ScanWorkerWorkspace,
} from './scan-worker.ts'
import { workerExecArgv } from './worker-exec-argv.ts'

/** Options of {@link createWorkerPool}. */
export interface WorkerPoolOptions {
  /** Worker threads (at least 1). */
  threads: number
  /**
   * Workers with nothing to do for this long exit (default 2 minutes); the next request starts
   * them. A new worker takes ~90 ms to start and runs slowly until V8 has compiled its hot
   * paths, so an agent's searches, seconds apart, should find them running.
   */
  idleMs?: number
  /** The worker's code (default: `scan-worker` beside this module). */
  entry?: URL
}

/** After this many workers failed to start or died, a pool reports 0 threads. */
const MAX_FAILURES = 3

interface Slot {
  worker: Worker
  /**
   * Set to 1 by the worker once it has loaded. Shared memory, not a message: a grep that scans
   * on this thread meanwhile never yields to the event loop, where a message would wait.
   */
  ready: Int32Array
  /** Requests sent and not yet answered. */
  busy: number
}

const isReady = (slot: Slot) => Atomics.load(slot.ready, 0) === 1

/**
 * Requests a worker holds at once. The rest wait in the pool and go to whichever worker is
 * free first: a worker runs its requests in order, so a long one would hold up those queued
 * behind it while the other worker ran dry.
 */
const PER_WORKER = 2

/** A request waiting in the pool for a worker. */
interface Pending {
  owner: object
  build: (id: number, cancel: Int32Array[]) => ScanWorkerRequest
  signal: AbortSignal | undefined
  cancel: Int32Array[]
  resolve(value: unknown): void
  reject(error: unknown): void
}

interface Waiting {
  slot: Slot
  /** Who sent it (a workspace's scanner), so that closing it can give up its requests. */
  owner: object
  resolve(value: FileScanOutcome[] | TreeScanOutcome[] | TreeListOutcome[]): void
  reject(error: unknown): void
}

/**
 * How to start a worker: the built `scan-worker.js` next to this file, or, when this module runs
 * from its TypeScript source (tests, benchmarks), `scan-worker.ts` loaded through tsx.
 */
function workerEntry(entry: URL | undefined): { entry: URL | string; eval: boolean } {
  if (entry !== undefined) return { entry, eval: false }
  if (!import.meta.url.endsWith('.ts'))
    return { entry: new URL('./scan-worker.js', import.meta.url), eval: false }
  // tsx's ESM entry sits beside the CommonJS one that require.resolve finds.
  const tsxApi = createRequire(import.meta.url)
    .resolve('tsx/esm/api')
    .replace(/\.cjs$/, '.mjs')
  const tsx = pathToFileURL(tsxApi).href
  const source = new URL('./scan-worker.ts', import.meta.url).href
  return {
    entry: `(async () => { (await import(${JSON.stringify(tsx)})).register(); await import(${JSON.stringify(source)}) })()`,
    eval: true,
  }
}

/** Worker threads that scan and walk for the local workspaces of a process. */
export interface WorkerPool {
  /** Workers ready to take work now (0 until started, and when they cannot run). */
  readonly threads: number
  /** Bring the workers up for `owner` if they are not running (returns at once). */
  start(owner?: object): void
  /**
   * Post a request to the least busy ready worker; its reply settles the promise. `cancel` are
   * the flags (besides the signal's) that stop it.
   */
  send<T>(
    owner: object,
    build: (id: number, cancel: Int32Array[]) => ScanWorkerRequest,
    signal: AbortSignal | undefined,
    cancel: Int32Array[],
  ): Promise<T>
  /** Reject what `owner` is still waiting for. */
  giveUp(owner: object, error: unknown): void
  /**
   * Give up `owner`'s requests and stop counting it as a user; when no user is left, stop the
   * workers (a later request starts them again), so a process need not wait for the idle time.
   */
  leave(owner: object, error: unknown): Promise<void>
  /** Stop every worker; a later request starts them again. */
  close(): Promise<void>
}

const cancelledError = () => new IsoagentError('cancelled', 'search cancelled')

/** The error a worker's failure reply stands for. */
function replyError(reply: { failed: string; cancelled: boolean }): IsoagentError {
  return reply.cancelled
    ? cancelledError()
    : new IsoagentError('internal', `scan worker failed: ${reply.failed}`)
}

/** The result a worker's reply carries, unpacked (undefined for a failure reply). */
function replyValue(
  reply: ScanWorkerReply,
): FileScanOutcome[] | TreeScanOutcome[] | TreeListOutcome[] | undefined {
  if ('outcomes' in reply) return unpackOutcomes(reply.outcomes)
  if ('tree' in reply) return unpackTree(reply.tree)
  if ('list' in reply) return reply.list
  return undefined
}

/** The least busy of `slots`, loaded ones first (a worker still loading takes work once up). */
function leastBusy(slots: readonly Slot[]): Slot {
  const ready = slots.filter(isReady)
  return (ready.length > 0 ? ready : slots).reduce((best, s) => (s.busy < best.busy ? s : best))
}

/** The pool {@link createWorkerPool} makes: its state, and each step as a named method. */
class ScanWorkerPool implements WorkerPool {
  private readonly idleMs: number
  private slots: Slot[] = []
  private readonly waiting = new Map<number, Waiting>()
  private pending: Pending[] = []
  private nextId = 1
  private failures = 0
  private idleTimer: ReturnType<typeof setTimeout> | undefined
  /** Who has started or sent work and not left since (see `leave`). */
  private readonly users = new Set<object>()
  /** Shared cancellation flags, one per signal (a grep sends hundreds of requests with one). */
  private readonly cancelFlags = new WeakMap<AbortSignal, Int32Array>()

  constructor(private readonly options: WorkerPoolOptions) {
    this.idleMs = options.idleMs ?? 120_000
  }

  get threads(): number {
    return this.failures >= MAX_FAILURES ? 0 : this.slots.filter(isReady).length
  }

  start(owner?: object): void {
    if (this.failures >= MAX_FAILURES) return
    if (owner !== undefined) this.users.add(owner)
    this.fill()
    this.pump()
    if (this.waiting.size === 0) this.scheduleIdle()
  }

  send<T>(
    owner: object,
    build: (id: number, cancel: Int32Array[]) => ScanWorkerRequest,
    signal: AbortSignal | undefined,
    cancel: Int32Array[],
  ): Promise<T> {
    if (signal?.aborted) return Promise.reject(cancelledError())
    if (this.failures >= MAX_FAILURES)
      return Promise.reject(new IsoagentError('unsupported', 'scan workers cannot run here'))
    clearTimeout(this.idleTimer)
    this.users.add(owner)
    this.fill()
    // Registers the abort listener that also drops the request while it waits here.
    if (signal !== undefined) this.flagOf(signal)
    return new Promise<T>((resolve, reject) => {
      this.pending.push({
        owner,
        build,
        signal,
        cancel,
        resolve: (value) => resolve(value as T),
        reject,
      })
      this.pump()
    })
  }

  giveUp(owner: object, error: unknown): void {
    this.dropPending((p) => p.owner === owner, error)
    this.rejectWaiting((w) => w.owner === owner, error)
    if (this.waiting.size === 0) this.scheduleIdle()
  }

  async leave(owner: object, error: unknown): Promise<void> {
    this.giveUp(owner, error)
    if (!this.users.delete(owner) || this.users.size > 0) return
    clearTimeout(this.idleTimer)
    await this.stopAll()
  }

  async close(): Promise<void> {
    clearTimeout(this.idleTimer)
    this.users.clear()
    const stopped = new IsoagentError('cancelled', 'scan workers stopped')
    this.dropPending(() => true, stopped)
    this.rejectWaiting(() => true, stopped)
    await this.stopAll()
  }

  /** Reject and forget the requests sent to workers that `which` picks. */
  private rejectWaiting(which: (w: Waiting) => boolean, error: unknown): void {
    for (const [id, w] of this.waiting) {
      if (!which(w)) continue
      this.waiting.delete(id)
      w.reject(error)
    }
  }

  /** A worker failed or exited: its requests fail, and the waiting ones go elsewhere. */
  private retire(slot: Slot, error: unknown): void {
    if (!this.slots.includes(slot)) return
    this.slots = this.slots.filter((s) => s !== slot)
    this.failures++
    this.rejectWaiting((w) => w.slot === slot, error)
    void slot.worker.terminate()
    if (this.failures >= MAX_FAILURES) {
      for (const p of this.pending) p.reject(error)
      this.pending = []
    } else if (this.pending.length > 0) {
      this.fill()
      this.pump()
    }
  }

  private spawn(): Slot {
    const { entry, eval: isCode } = workerEntry(this.options.entry)
    const ready = new Int32Array(new SharedArrayBuffer(4))
    const workerData: ScanWorkerStart = { ready }
    const worker = new Worker(entry, { workerData, eval: isCode, execArgv: workerExecArgv() })
    const slot: Slot = { worker, ready, busy: 0 }
    worker.on('message', (reply: ScanWorkerReply) => this.onReply(slot, reply))
    worker.on('error', (error) => this.retire(slot, error))
    worker.on('exit', (code) =>
      this.retire(slot, new IsoagentError('internal', `scan worker exited with code ${code}`)),
    )
    // After the listeners: adding a 'message' listener refs the worker's port again, and a
    // referenced port holds a finished process open. Work refs the worker (and port) in pump().
    worker.unref()
    return slot
  }

  /** A worker answered: settle the request, and hand it more work. */
  private onReply(slot: Slot, reply: ScanWorkerReply): void {
    const w = this.waiting.get(reply.id)
    // pump() below refs it again if it hands this worker more work.
    if (--slot.busy === 0) slot.worker.unref()
    if (w !== undefined) {
      this.waiting.delete(reply.id)
      const value = replyValue(reply)
      if (value !== undefined) w.resolve(value)
      else w.reject(replyError(reply as { failed: string; cancelled: boolean }))
    }
    this.pump()
    if (this.waiting.size === 0) this.scheduleIdle()
  }

  /** Bring the pool up to its thread count (workers that died are replaced). */
  private fill(): void {
    while (this.slots.length < this.options.threads) this.slots.push(this.spawn())
  }

  private async stopAll(): Promise<void> {
    const all = this.slots
    this.slots = []
    await Promise.all(all.map((s) => s.worker.terminate()))
  }

  private scheduleIdle(): void {
    clearTimeout(this.idleTimer)
    this.idleTimer = setTimeout(() => {
      // Requests waiting in the pool may wait on workers still busy with given-up work.
      if (this.waiting.size === 0 && this.pending.length === 0) void this.stopAll()
    }, this.idleMs)
    this.idleTimer.unref?.()
  }

  /**
   * The cancellation flag of `signal`, shared with the workers: 1 once it aborts. A worker runs
   * a request start to end without looking at its messages, so a message could not stop it;
   * it reads this flag at every file and directory, also for requests still queued.
   */
  private flagOf(signal: AbortSignal): Int32Array {
    const known = this.cancelFlags.get(signal)
    if (known !== undefined) return known
    const flag = new Int32Array(new SharedArrayBuffer(4))
    this.cancelFlags.set(signal, flag)
    signal.addEventListener(
      'abort',
      () => {
        Atomics.store(flag, 0, 1)
        this.dropPending((p) => p.signal === signal, cancelledError())
      },
      { once: true },
    )
    return flag
  }

  /** Reject and forget the waiting requests `which` picks. */
  private dropPending(which: (p: Pending) => boolean, error: unknown): void {
    const dropped = this.pending.filter(which)
    if (dropped.length === 0) return
    this.pending = this.pending.filter((p) => !which(p))
    for (const p of dropped) p.reject(error)
  }

  /**
   * Hand waiting requests, oldest first, to the least busy workers that have room, loaded ones
   * first (a worker still loading takes its requests once it is up).
   */
  private pump(): void {
    while (this.pending.length > 0) {
      const room = this.slots.filter((s) => s.busy < PER_WORKER)
      if (room.length === 0) return
      const slot = leastBusy(room)
      const p = this.pending.shift()!
      if (p.signal?.aborted) {
        p.reject(cancelledError())
        continue
      }
      const id = this.nextId++
      if (slot.busy++ === 0) slot.worker.ref()
      this.waiting.set(id, { slot, owner: p.owner, resolve: p.resolve, reject: p.reject })
      const flags = p.signal === undefined ? p.cancel : [this.flagOf(p.signal), ...p.cancel]
      slot.worker.postMessage(p.build(id, flags))
    }
  }
}

/** A pool of scan workers (most callers share {@link sharedWorkerPool}). */
export function createWorkerPool(options: WorkerPoolOptions): WorkerPool {
  return new ScanWorkerPool(options)
}

const shared = new Map<number, WorkerPool>()

/**
 * The process's pool of `threads` scan workers, shared by every local workspace that asks for
 * that many: however many workspaces and sessions a process opens, it runs at most that many
 * scan workers, and they stay warm from one workspace's search to the next.
 */
export function sharedWorkerPool(threads: number): WorkerPool {
  let pool = shared.get(threads)
  if (pool === undefined) shared.set(threads, (pool = createWorkerPool({ threads })))
  return pool
}

/** Options of {@link workerScanner}. */
export interface WorkerScannerOptions {
  /** The workspace's real root. */
  root: string
  /** Its read settings. */
  options: LocalFilesOptions
  /** Worker threads of the shared pool (at least 1), unless `pool` is given. */
  threads: number
  /** The pool to use (default: the process's {@link sharedWorkerPool} of `threads`). */
  pool?: WorkerPool
  /** The calling thread's checked real paths of `dirs`, sent along for the worker to adopt. */
  hints?: (dirs: readonly WorkspacePath[]) => DirHint[]
}

/** A {@link FileScanner} that can also be shut down. */
export interface WorkerScanner extends FileScanner {
  /**
   * Stop this workspace's work on the workers and give up its requests; the last workspace of
   * the pool to close stops its workers. Later scans work (and start them again).
   */
  close(): Promise<void>
}

/**
 * Scan files for grep (and walk directories for glob) of one local workspace on the pool's
 * worker threads, each running the search tool's own scan over the same root (so the same
 * containment checks). Workers start on `start()` (or the first scan) and count in `threads`
 * once loaded; they keep the process alive only while they have work. If they cannot run, the
 * scanner's calls reject and the search tool scans on its own thread.
 */
export function workerScanner(options: WorkerScannerOptions): WorkerScanner {
  const pool = options.pool ?? sharedWorkerPool(options.threads)
  const workspace: ScanWorkerWorkspace = { root: options.root, options: options.options }
  /** Set to 1 when the workspace closes: its requests still queued or running stop. */
  let closed = new Int32Array(new SharedArrayBuffer(4))
  const self = {}
  /** Send `work`, with the checked real paths of `hintDirs` for the worker to adopt. */
  const send = <T>(work: ScanWork, hintDirs: readonly WorkspacePath[], signal?: AbortSignal) =>
    pool.send<T>(
      self,
      (id, cancel) => ({ ...work, id, workspace, cancel, hints: options.hints?.(hintDirs) ?? [] }),
      signal,
      [closed],
    )
  return {
    get threads() {
      return pool.threads
    },
    start() {
      pool.start(self)
    },
    scan(job: FileScanJob, paths: readonly WorkspacePath[], signal?: AbortSignal) {
      const parents = paths.map((p) => WorkspacePath.parent(p))
      return send<FileScanOutcome[]>({ type: 'scan', job, paths: [...paths] }, parents, signal)
    },
    scanTree(job: FileScanJob, tree: TreeScanRequest, signal?: AbortSignal) {
      return send<TreeScanOutcome[]>({ type: 'tree', job, tree }, tree.dirs, signal)
    },
    listTree(tree: TreeListRequest, signal?: AbortSignal) {
      return send<TreeListOutcome[]>({ type: 'list', tree }, tree.dirs, signal)
    },
    async close() {
      Atomics.store(closed, 0, 1)
      closed = new Int32Array(new SharedArrayBuffer(4))
      await pool.leave(self, new IsoagentError('cancelled', 'workspace closed'))
    },
  }
}
