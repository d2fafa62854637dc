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

/** A pool of scan workers (most callers share {@link sharedWorkerPool}). */
export function createWorkerPool(options: WorkerPoolOptions): WorkerPool {
  const idleMs = options.idleMs ?? 120_000
  let slots: Slot[] = []
  const waiting = new Map<number, Waiting>()
  let pending: Pending[] = []
  let nextId = 1
  let failures = 0
  let idleTimer: ReturnType<typeof setTimeout> | undefined
  /** Who has started or sent work and not left since (see `leave`). */
  const users = new Set<object>()
  /** Shared cancellation flags, one per signal (a grep sends hundreds of requests with one). */
  const cancelFlags = new WeakMap<AbortSignal, Int32Array>()

  const retire = (slot: Slot, error: unknown) => {
    if (!slots.includes(slot)) return
    slots = slots.filter((s) => s !== slot)
    failures++
    for (const [id, w] of waiting) {
      if (w.slot !== slot) continue
      waiting.delete(id)
      w.reject(error)
    }
    void slot.worker.terminate()
    if (failures >= MAX_FAILURES) {
      for (const p of pending) p.reject(error)
      pending = []
    } else if (pending.length > 0) {
      fill()
      pump()
    }
  }

  const spawn = (): Slot => {
    const { entry, eval: isCode } = workerEntry(options.entry)
    const ready = new Int32Array(new SharedArrayBuffer(4))
    const workerData: ScanWorkerStart = { ready }
    const worker = new Worker(entry, { workerData, eval: isCode })
    const slot: Slot = { worker, ready, busy: 0 }
    worker.on('message', (reply: ScanWorkerReply) => {
      const w = waiting.get(reply.id)
      // pump() below refs it again if it hands this worker more work.
      if (--slot.busy === 0) worker.unref()
      if (w !== undefined) {
        waiting.delete(reply.id)
        if ('outcomes' in reply) w.resolve(unpackOutcomes(reply.outcomes))
        else if ('tree' in reply) w.resolve(unpackTree(reply.tree))
        else if ('list' in reply) w.resolve(reply.list)
        else
          w.reject(
            reply.cancelled
              ? new IsoagentError('cancelled', 'search cancelled')
              : new IsoagentError('internal', `scan worker failed: ${reply.failed}`),
          )
      }
      pump()
      if (waiting.size === 0) scheduleIdle()
    })
    worker.on('error', (error) => retire(slot, error))
    worker.on('exit', (code) =>
      retire(slot, new IsoagentError('internal', `scan worker exited with code ${code}`)),
    )
    // After the listeners: adding a 'message' listener refs the worker's port again, and a
    // referenced port holds a finished process open. Work refs the worker (and port) in pump().
    worker.unref()
    return slot
  }

  /** Bring the pool up to its thread count (workers that died are replaced). */
  const fill = () => {
    while (slots.length < options.threads) slots.push(spawn())
  }

  const stopAll = async () => {
    const all = slots
    slots = []
    await Promise.all(all.map((s) => s.worker.terminate()))
  }

  const scheduleIdle = () => {
    clearTimeout(idleTimer)
    idleTimer = setTimeout(() => {
      // Requests waiting in the pool may wait on workers still busy with given-up work.
      if (waiting.size === 0 && pending.length === 0) void stopAll()
    }, idleMs)
    idleTimer.unref?.()
  }

  /**
   * The cancellation flag of `signal`, shared with the workers: 1 once it aborts. A worker runs
   * a request start to end without looking at its messages, so a message could not stop it;
   * it reads this flag at every file and directory, also for requests still queued.
   */
  const flagOf = (signal: AbortSignal): Int32Array => {
    let flag = cancelFlags.get(signal)
    if (flag === undefined) {
      const shared = new Int32Array(new SharedArrayBuffer(4))
      flag = shared
      cancelFlags.set(signal, shared)
      signal.addEventListener(
        'abort',
        () => {
          Atomics.store(shared, 0, 1)
          dropPending(
            (p) => p.signal === signal,
            new IsoagentError('cancelled', 'search cancelled'),
          )
        },
        { once: true },
      )
    }
    return flag
  }

  /** Reject and forget the waiting requests `which` picks. */
  const dropPending = (which: (p: Pending) => boolean, error: unknown) => {
    const dropped = pending.filter(which)
    if (dropped.length === 0) return
    pending = pending.filter((p) => !which(p))
    for (const p of dropped) p.reject(error)
  }

  /**
   * Hand waiting requests, oldest first, to the least busy workers that have room, loaded ones
   * first (a worker still loading takes its requests once it is up).
   */
  function pump() {
    while (pending.length > 0) {
      const room = slots.filter((s) => s.busy < PER_WORKER)
      if (room.length === 0) return
      const ready = room.filter(isReady)
      const slot = (ready.length > 0 ? ready : room).reduce((best, s) =>
        s.busy < best.busy ? s : best,
      )
      const p = pending.shift()!
      if (p.signal?.aborted) {
        p.reject(new IsoagentError('cancelled', 'search cancelled'))
        continue
      }
      const id = nextId++
      if (slot.busy++ === 0) slot.worker.ref()
      waiting.set(id, { slot, owner: p.owner, resolve: p.resolve, reject: p.reject })
      slot.worker.postMessage(
        p.build(id, p.signal === undefined ? p.cancel : [flagOf(p.signal), ...p.cancel]),
      )
    }
  }

  return {
    get threads() {
      return failures >= MAX_FAILURES ? 0 : slots.filter(isReady).length
    },
    start(owner) {
      if (failures >= MAX_FAILURES) return
      if (owner !== undefined) users.add(owner)
      fill()
      pump()
      if (waiting.size === 0) scheduleIdle()
    },
    send<T>(
      owner: object,
      build: (id: number, cancel: Int32Array[]) => ScanWorkerRequest,
      signal: AbortSignal | undefined,
      cancel: Int32Array[],
    ) {
      if (signal?.aborted) return Promise.reject(new IsoagentError('cancelled', 'search cancelled'))
      if (failures >= MAX_FAILURES)
        return Promise.reject(new IsoagentError('unsupported', 'scan workers cannot run here'))
      clearTimeout(idleTimer)
      users.add(owner)
      fill()
      // Registers the abort listener that also drops the request while it waits here.
      if (signal !== undefined) flagOf(signal)
      return new Promise<T>((resolve, reject) => {
        pending.push({
          owner,
          build,
          signal,
          cancel,
          resolve: (value) => resolve(value as T),
          reject,
        })
        pump()
      })
    },
    giveUp(owner, error) {
      dropPending((p) => p.owner === owner, error)
      for (const [id, w] of waiting) {
        if (w.owner !== owner) continue
        waiting.delete(id)
        w.reject(error)
      }
      if (waiting.size === 0) scheduleIdle()
    },
    async leave(owner, error) {
      this.giveUp(owner, error)
      if (!users.delete(owner) || users.size > 0) return
      clearTimeout(idleTimer)
      await stopAll()
    },
    async close() {
      clearTimeout(idleTimer)
      users.clear()
      dropPending(() => true, new IsoagentError('cancelled', 'scan workers stopped'))
      for (const [id, w] of waiting) {
        waiting.delete(id)
        w.reject(new IsoagentError('cancelled', 'scan workers stopped'))
      }
      await stopAll()
    },
  }
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
