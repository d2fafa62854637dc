// The pool of program workers that a worker runner (Node threads, browser Web Workers) keeps: one
// set of warm workers per QuickJS loader, at most `maxWorkers` alive, the oldest ready worker
// lent first, a terminated one replaced off the caller's path. Web-standard only: the runtime
// gives it workers through the `GuestWorker` port.
import type { GuestWorker } from './guest-worker.ts'
import type { ProgramWorkerReply } from './program-worker-protocol.ts'
import type { QuickJsLoader } from './quickjs-loader.ts'

/** Options of {@link createGuestPool}. */
export interface GuestPoolOptions {
  /** Workers alive at once, busy and idle. */
  maxWorkers: number
  /** Idle workers kept warm per loader. */
  warmWorkers: number
  /** Start a worker (it waits for `init`). */
  spawn(): GuestWorker
  /**
   * The compiled QuickJS module of `loader` to post to its workers, or none (a worker then loads
   * QuickJS by itself). Called once per loader while it resolves; a rejection fails the run.
   */
  moduleOf(loader: QuickJsLoader): Promise<WebAssembly.Module | undefined>
  /**
   * A worker that fails before it is ready means none can start here (no script, a CSP): stop
   * them all and set {@link GuestPool.disabled} (a browser page then runs programs itself).
   */
  disableOnStartFailure?: boolean
}

/** One worker of the pool. */
export interface GuestSlot {
  worker: GuestWorker
  loader: QuickJsLoader
  /** Terminated, or failed: never lent again. */
  dead: boolean
  /** QuickJS loaded and a guest waiting (the worker said `ready`). */
  ready: boolean
  /** Lent to a run. */
  busy: boolean
  /** The worker failed before it said `ready`: its script could not start here. */
  startFailed: boolean
}

/** Counts of a pool, for tests and benchmarks. */
export interface GuestPoolStats {
  busy: number
  idle: number
  spawned: number
  terminated: number
}

/** A pool of program workers. */
export interface GuestPool {
  /** Lend a worker for `loader` (waits while all are busy); undefined when aborted or disabled. */
  take(loader: QuickJsLoader, signal: AbortSignal): Promise<GuestSlot | undefined>
  /** Take back a lent worker: kept warm when `reusable` and wanted, else terminated. */
  giveBack(slot: GuestSlot, reusable: boolean): void
  /** The module `loader`'s workers get (memoised; a rejection is retried next time). */
  module(loader: QuickJsLoader): Promise<WebAssembly.Module | undefined>
  /** Start warm workers for `loader` up to `warmWorkers`. */
  fill(loader: QuickJsLoader): void
  /** Workers cannot start here (see {@link GuestPoolOptions.disableOnStartFailure}). */
  readonly disabled: boolean
  stats(): GuestPoolStats
  /** Terminate every worker. */
  close(): Promise<void>
}

/** A pool over `options.spawn`; see {@link GuestPool}. */
export function createGuestPool(options: GuestPoolOptions): GuestPool {
  const { maxWorkers, warmWorkers } = options
  const idleOf = new WeakMap<QuickJsLoader, GuestSlot[]>()
  const alive = new Set<GuestSlot>()
  const waiters: (() => void)[] = []
  const counts = { spawned: 0, terminated: 0, busy: 0 }
  let disabled = false
  /** Bumped by `close`: a top-up planned before it does not start workers after it. */
  let closings = 0

  const module = memoised(options.moduleOf)
  const idle = (loader: QuickJsLoader): GuestSlot[] => {
    let list = idleOf.get(loader)
    if (list === undefined) idleOf.set(loader, (list = []))
    return list
  }
  /** Terminate a worker and forget it (no-op for one already dead). */
  const retire = (slot: GuestSlot): void | Promise<void> => {
    if (slot.dead) return
    slot.dead = true
    alive.delete(slot)
    const list = idle(slot.loader)
    const index = list.indexOf(slot)
    if (index >= 0) list.splice(index, 1)
    counts.terminated++
    return slot.worker.terminate()
  }
  const disable = () => {
    disabled = true
    for (const slot of [...alive]) if (!slot.busy) void retire(slot)
    for (const wake of waiters.splice(0)) wake()
  }

  const spawn = (loader: QuickJsLoader): GuestSlot => {
    const worker = options.spawn()
    const slot: GuestSlot = {
      worker,
      loader,
      dead: false,
      ready: false,
      busy: false,
      startFailed: false,
    }
    counts.spawned++
    alive.add(slot)
    watch(slot, () => {
      // A worker that never said `ready` could not start: so will the next ones.
      if (!slot.ready && !slot.dead && options.disableOnStartFailure === true) {
        slot.startFailed = true
        disable()
      }
      void retire(slot)
    })
    worker.hold?.(false)
    // The worker starts while QuickJS may still be compiling here; the module follows when ready.
    module(loader).then(
      (compiled) => worker.post({ type: 'init', ...(compiled ? { module: compiled } : {}) }),
      () => {},
    )
    return slot
  }
  /**
   * Start workers for `loader` until it has `warmWorkers` alive (idle or lent): a lent one comes
   * back warm, so counting only the idle ones would start workers that its return then retires.
   */
  const fill = (loader: QuickJsLoader) => {
    const list = idle(loader)
    let count = 0
    for (const slot of alive) if (slot.loader === loader) count++
    for (; !disabled && count < warmWorkers && alive.size < maxWorkers; count++)
      list.push(spawn(loader))
  }

  /** A worker for `loader` now: an idle one (the oldest ready first), a new one, or none. */
  const lend = (loader: QuickJsLoader): GuestSlot | 'retry' | 'full' => {
    const list = idle(loader)
    // The oldest ready worker first: a fresh one may still be loading QuickJS.
    const index = list.findIndex((s) => s.ready && !s.dead)
    const found = index >= 0 ? list.splice(index, 1)[0] : list.shift()
    if (found !== undefined) return found.dead ? 'retry' : found
    if (alive.size < maxWorkers) return spawn(loader)
    // Every worker is busy or idle for another loader: drop one idle elsewhere, or wait.
    const other = [...alive].find((s) => !s.busy && s.loader !== loader)
    if (other === undefined) return 'full'
    void retire(other)
    return 'retry'
  }

  const take = async (loader: QuickJsLoader, signal: AbortSignal) => {
    for (;;) {
      if (signal.aborted || disabled) return undefined
      const slot = lend(loader)
      if (slot === 'full') await freed(waiters, signal)
      else if (slot !== 'retry') {
        slot.busy = true
        counts.busy++
        slot.worker.hold?.(true)
        return slot
      }
    }
  }

  const giveBack = (slot: GuestSlot, reusable: boolean) => {
    slot.busy = false
    counts.busy--
    const list = idle(slot.loader)
    if (reusable && !slot.dead && list.length < warmWorkers) {
      slot.worker.hold?.(false)
      list.push(slot)
    } else void retire(slot)
    // A terminated worker is replaced off the caller's path: starting one holds this thread for
    // milliseconds, so it waits until the run's outcome has gone on.
    const generation = closings
    setTimeout(() => {
      if (generation === closings) fill(slot.loader)
    }, 0)
    waiters.shift()?.()
  }

  return {
    take,
    giveBack,
    module,
    fill,
    get disabled() {
      return disabled
    },
    stats: () => ({
      busy: counts.busy,
      idle: alive.size - counts.busy,
      spawned: counts.spawned,
      terminated: counts.terminated,
    }),
    async close() {
      closings++
      await Promise.all([...alive].map(retire))
    },
  }
}

/** `moduleOf` once per loader while it resolves (a rejection is dropped, so retried next time). */
function memoised(
  moduleOf: (loader: QuickJsLoader) => Promise<WebAssembly.Module | undefined>,
): (loader: QuickJsLoader) => Promise<WebAssembly.Module | undefined> {
  const modules = new WeakMap<QuickJsLoader, Promise<WebAssembly.Module | undefined>>()
  return (loader) => {
    let compiled = modules.get(loader)
    if (compiled === undefined) {
      compiled = moduleOf(loader)
      compiled.catch(() => modules.delete(loader))
      modules.set(loader, compiled)
    }
    return compiled
  }
}

/** Mark `slot` ready at its `ready` reply, and call `failed` when its worker fails. */
function watch(slot: GuestSlot, failed: () => void): void {
  const { worker } = slot
  const onReady = (reply: ProgramWorkerReply) => {
    if (reply.type !== 'ready') return
    slot.ready = true
    worker.off('message', onReady)
  }
  worker.on('message', onReady)
  worker.on('error', failed)
}

/** Wait until a worker is given back (a waiter woken), or `signal` aborts. */
function freed(waiters: (() => void)[], signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const wake = () => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }
    const onAbort = () => {
      const index = waiters.indexOf(wake)
      if (index >= 0) waiters.splice(index, 1)
      resolve()
    }
    waiters.push(wake)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
