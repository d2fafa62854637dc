import {
  importQuickJs,
  inlineProgramRunner,
  type ProgramHost,
  type ProgramLimits,
  type ProgramOutcome,
  type ProgramRunner,
  type ProgramSource,
  type QuickJsLoader,
} from '../../src/index.ts'
import type {
  ProgramWorkerCall,
  ProgramWorkerReply,
  ProgramWorkerRequest,
} from '../../src/tools/program/program-worker-protocol.ts'
import { callToolJson } from '../../src/tools/program/run-program.ts'

/** Options of {@link createBrowserProgramRunner}. */
export interface BrowserProgramRunnerOptions {
  /** Programs running at once (each in its own Web Worker); more wait for a free one. Default 4. */
  maxWorkers?: number
  /** Idle workers kept warm (QuickJS loaded, an instance ready). Default 1. */
  warmWorkers?: number
  /**
   * How long past its deadline (or its cancellation) a guest may take to stop by itself before
   * its worker is terminated. Default 250 ms.
   */
  killGraceMs?: number
  /**
   * Starts a program worker. Default: the module worker `program-worker.js` beside this file,
   * written as `new Worker(new URL(…, import.meta.url), { type: 'module' })` so that Vite bundles
   * it as a worker chunk; other bundlers must emit it beside the bundle (or pass this).
   */
  createWorker?: () => Worker
}

/** The browser program runner: guests in Web Workers, terminated at their deadline. */
export interface BrowserProgramRunner extends ProgramRunner {
  /** Start the warm workers for `loader`'s QuickJS now (the first program then waits less). */
  prewarm(loader?: QuickJsLoader): void
  /** Workers alive now, and how many were terminated (for tests). */
  stats(): { busy: number; idle: number; spawned: number; terminated: number; fallback: boolean }
  /** Terminate every worker. */
  close(): void
}

interface Slot {
  worker: Worker
  pool: LoaderPool
  dead: boolean
  ready: boolean
  /** The worker failed before it said `ready`: its script could not load here. */
  startFailed?: boolean
  /** The run using the worker, told when the worker fails. */
  onError?: (message: string) => void
}

/** The workers of one loader's QuickJS. */
interface LoaderPool {
  loader: QuickJsLoader
  idle: Slot[]
}

const defaultWorker = () =>
  new Worker(new URL('./program-worker.js', import.meta.url), { type: 'module' })

/** The module a loader gives, to post to workers; none for QuickJS's own loading. */
async function moduleFor(loader: QuickJsLoader): Promise<WebAssembly.Module | undefined> {
  if (loader === importQuickJs) return undefined
  return (await loader()).module
}

function stopped(
  status: 'timeout' | 'cancelled',
  facts: { toolCalls: number; startedAt: number },
  limits: ProgramLimits,
): ProgramOutcome {
  const base = {
    toolCalls: facts.toolCalls,
    durationMs: Date.now() - facts.startedAt,
    logs: [],
    logsDropped: 0,
    memoryBytes: 0,
  }
  if (status === 'cancelled') return { ...base, status: 'cancelled' }
  return {
    ...base,
    status: 'limit',
    limit: 'timeout',
    message: `the program ran past timeoutMs (${limits.timeoutMs} ms) inside a built-in that does not yield; its worker was terminated`,
  }
}

function crashed(facts: { toolCalls: number; startedAt: number }, detail: string): ProgramOutcome {
  return {
    toolCalls: facts.toolCalls,
    durationMs: Date.now() - facts.startedAt,
    logs: [],
    logsDropped: 0,
    memoryBytes: 0,
    status: 'error',
    errorName: 'InternalError',
    message: `the program's interpreter failed: ${detail}`,
    stack: '',
  }
}

/**
 * A pool of program Web Workers; most pages use the shared {@link browserProgramRunner}, which
 * `isoagent/browser` installs where `Worker` exists. A worker that fails to start (no worker
 * script where the bundler put the page, a Content-Security-Policy refusing it) turns the runner
 * into {@link inlineProgramRunner} (native-loop bounds on the page's thread) from then on.
 */
export function createBrowserProgramRunner(
  options: BrowserProgramRunnerOptions = {},
): BrowserProgramRunner {
  const maxWorkers = Math.max(1, options.maxWorkers ?? 4)
  const warmWorkers = Math.max(0, options.warmWorkers ?? 1)
  const graceMs = options.killGraceMs ?? 250
  const createWorker = options.createWorker ?? defaultWorker
  const modules = new WeakMap<QuickJsLoader, Promise<WebAssembly.Module | undefined>>()
  const pools = new WeakMap<QuickJsLoader, LoaderPool>()
  const alive = new Set<Slot>()
  const waiters: (() => void)[] = []
  let spawned = 0
  let terminated = 0
  let busy = 0
  let fallback = false

  const moduleOf = (loader: QuickJsLoader) => {
    let module = modules.get(loader)
    if (module === undefined) {
      module = moduleFor(loader)
      module.catch(() => modules.delete(loader))
      modules.set(loader, module)
    }
    return module
  }
  const poolOf = (loader: QuickJsLoader): LoaderPool => {
    let pool = pools.get(loader)
    if (pool === undefined) {
      pool = { loader, idle: [] }
      pools.set(loader, pool)
    }
    return pool
  }
  const kill = (slot: Slot) => {
    if (slot.dead) return
    slot.dead = true
    alive.delete(slot)
    const index = slot.pool.idle.indexOf(slot)
    if (index >= 0) slot.pool.idle.splice(index, 1)
    terminated++
    slot.worker.terminate()
  }
  /** The workers cannot start here: stop them, and run every program in the page from now on. */
  const fallBack = () => {
    fallback = true
    for (const slot of [...alive]) if (slot.onError === undefined) kill(slot)
    for (const wake of waiters.splice(0)) wake()
  }

  const spawn = (pool: LoaderPool): Slot => {
    const worker = createWorker()
    const slot: Slot = { worker, pool, dead: false, ready: false }
    spawned++
    alive.add(slot)
    worker.addEventListener('message', (event: MessageEvent<ProgramWorkerReply>) => {
      if (event.data.type === 'ready') slot.ready = true
    })
    worker.addEventListener('error', (event: ErrorEvent) => {
      event.preventDefault()
      const message = event.message || 'the program worker failed to start'
      const running = slot.onError
      // A worker that never said `ready` could not start: so will the next ones.
      if (!slot.ready) {
        slot.startFailed = true
        fallBack()
      }
      kill(slot)
      running?.(message)
    })
    moduleOf(pool.loader).then(
      (module) => worker.postMessage({ type: 'init', ...(module ? { module } : {}) }),
      () => {},
    )
    return slot
  }
  const fill = (pool: LoaderPool) => {
    while (!fallback && pool.idle.length < warmWorkers && alive.size < maxWorkers)
      pool.idle.push(spawn(pool))
  }

  const take = async (pool: LoaderPool, signal: AbortSignal): Promise<Slot | undefined> => {
    for (;;) {
      if (signal.aborted || fallback) return undefined
      const index = pool.idle.findIndex((s) => s.ready && !s.dead)
      const ready = index >= 0 ? pool.idle.splice(index, 1)[0] : pool.idle.shift()
      if (ready !== undefined && !ready.dead) return ready
      if (ready !== undefined) continue
      if (alive.size < maxWorkers) return spawn(pool)
      const other = [...alive].find((s) => s.onError === undefined && s.pool !== pool)
      if (other !== undefined) {
        kill(other)
        continue
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener('abort', wake)
          resolve()
        }
        waiters.push(wake)
        signal.addEventListener('abort', wake, { once: true })
      })
    }
  }

  const giveBack = (slot: Slot, reusable: boolean) => {
    slot.onError = undefined
    busy--
    if (reusable && !slot.dead && slot.pool.idle.length < warmWorkers) slot.pool.idle.push(slot)
    else kill(slot)
    fill(slot.pool)
    waiters.shift()?.()
  }

  const drive = (
    slot: Slot,
    program: ProgramSource,
    inputsJson: string,
    limits: ProgramLimits,
    host: ProgramHost,
    startedAt: number,
  ): Promise<ProgramOutcome> =>
    new Promise((resolve, reject) => {
      const { worker } = slot
      const facts = { toolCalls: 0, startedAt }
      let settled = false
      let answers: { id: number; json: string }[] = []
      let abortTimer: ReturnType<typeof setTimeout> | undefined
      const post = (request: ProgramWorkerRequest) => worker.postMessage(request)
      const flush = () => {
        if (settled || answers.length === 0) return
        post({ type: 'answers', answers })
        answers = []
      }
      const finish = (outcome: ProgramOutcome | Error, reusable: boolean) => {
        if (settled) return
        settled = true
        clearTimeout(deadline)
        clearTimeout(abortTimer)
        worker.removeEventListener('message', onMessage)
        host.signal.removeEventListener('abort', onAbort)
        giveBack(slot, reusable)
        if (outcome instanceof Error) reject(outcome)
        else resolve(outcome)
      }
      const forward = (call: ProgramWorkerCall) => {
        facts.toolCalls++
        void callToolJson(host, call.name, call.argsJson).then((json) => {
          if (settled) return
          if (answers.push({ id: call.id, json }) === 1) queueMicrotask(flush)
        })
      }
      const onMessage = ({ data: reply }: MessageEvent<ProgramWorkerReply>) => {
        if (reply.type === 'done') finish(reply.outcome, true)
        else if (reply.type === 'calls') for (const call of reply.calls) forward(call)
        else if (reply.type === 'unavailable') finish(new Error(reply.message), false)
      }
      const onAbort = () => {
        if (settled) return
        post({ type: 'abort' })
        abortTimer ??= setTimeout(() => finish(stopped('cancelled', facts, limits), false), graceMs)
      }
      slot.onError = (message) => finish(crashed(facts, message), false)
      const deadline = setTimeout(
        () => finish(stopped('timeout', facts, limits), false),
        limits.timeoutMs + graceMs,
      )
      worker.addEventListener('message', onMessage)
      host.signal.addEventListener('abort', onAbort, { once: true })
      post({ type: 'run', program, inputsJson, limits })
      if (host.signal.aborted) onAbort()
    })

  const runner: BrowserProgramRunner = {
    async run(loader, program, inputsJson, limits, host) {
      if (!fallback) {
        const startedAt = Date.now()
        const slot = await take(poolOf(loader), host.signal)
        if (slot === undefined && !fallback)
          return stopped('cancelled', { toolCalls: 0, startedAt }, limits)
        if (slot !== undefined) {
          busy++
          try {
            await moduleOf(loader)
          } catch (error) {
            giveBack(slot, false)
            throw error
          }
          const outcome = await drive(slot, program, inputsJson, limits, host, startedAt)
          // A worker that could not start: this program runs in the page like the next ones.
          if (slot.startFailed !== true) return outcome
        }
      }
      return inlineProgramRunner.run(loader, program, inputsJson, limits, host)
    },
    prewarm(loader = importQuickJs) {
      fill(poolOf(loader))
    },
    stats: () => ({ busy, idle: alive.size - busy, spawned, terminated, fallback }),
    close() {
      for (const slot of [...alive]) kill(slot)
    },
  }
  return runner
}

/** The runner `isoagent/browser` installs where `Worker` exists: one pool per page. */
export const browserProgramRunner: BrowserProgramRunner = createBrowserProgramRunner()
