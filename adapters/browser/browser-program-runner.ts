import {
  importQuickJs,
  inlineProgramRunner,
  type ProgramOutcome,
  type ProgramRunner,
  type QuickJsLoader,
} from '../../src/index.ts'
import { driveGuest, stoppedOutcome } from '../../src/tools/program/drive-guest.ts'
import { createGuestPool } from '../../src/tools/program/guest-pool.ts'
import type { GuestWorker } from '../../src/tools/program/guest-worker.ts'
import type { ProgramWorkerRequest } from '../../src/tools/program/program-worker-protocol.ts'

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

const defaultWorker = () =>
  new Worker(new URL('./program-worker.js', import.meta.url), { type: 'module' })

/** The module a loader gives, to post to workers; none for QuickJS's own loading. */
async function moduleFor(loader: QuickJsLoader): Promise<WebAssembly.Module | undefined> {
  if (loader === importQuickJs) return undefined
  return (await loader()).module
}

/** A Web Worker as the pool's {@link GuestWorker}: an uncaught error in it fails it. */
function webWorker(worker: Worker): GuestWorker {
  type Listener = (event: never) => void
  const wrapped = new Map<Listener, EventListener>()
  return {
    post: (request: ProgramWorkerRequest) => worker.postMessage(request),
    on(type, listener) {
      const wrapper: EventListener =
        type === 'message'
          ? (event) => listener((event as MessageEvent).data as never)
          : (event) => {
              event.preventDefault()
              const message = (event as ErrorEvent).message || 'the program worker failed to start'
              listener({ message } as never)
            }
      wrapped.set(listener as Listener, wrapper)
      worker.addEventListener(type, wrapper)
    },
    off(type, listener) {
      const wrapper = wrapped.get(listener as Listener)
      wrapped.delete(listener as Listener)
      if (wrapper !== undefined) worker.removeEventListener(type, wrapper)
    },
    terminate: () => worker.terminate(),
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
  const graceMs = options.killGraceMs ?? 250
  const createWorker = options.createWorker ?? defaultWorker
  const pool = createGuestPool({
    maxWorkers: Math.max(1, options.maxWorkers ?? 4),
    warmWorkers: Math.max(0, options.warmWorkers ?? 1),
    spawn: () => webWorker(createWorker()),
    moduleOf: moduleFor,
    disableOnStartFailure: true,
  })
  /** The outcome in a worker, or undefined when no worker can start here. */
  const inWorker = async (
    ...[loader, program, inputsJson, limits, host]: Parameters<ProgramRunner['run']>
  ): Promise<ProgramOutcome | undefined> => {
    const startedAt = Date.now()
    const slot = await pool.take(loader, host.signal)
    if (slot === undefined)
      return pool.disabled
        ? undefined
        : stoppedOutcome('cancelled', { toolCalls: 0, startedAt }, limits, 'worker')
    try {
      await pool.module(loader)
    } catch (error) {
      pool.giveBack(slot, false)
      throw error
    }
    const outcome = await driveGuest(
      slot.worker,
      { program, inputsJson, limits, host, startedAt },
      { graceMs, unit: 'worker', release: (reusable) => pool.giveBack(slot, reusable) },
    )
    // A worker that could not start: this program runs in the page like the next ones.
    return slot.startFailed ? undefined : outcome
  }
  return {
    async run(loader, program, inputsJson, limits, host) {
      const outcome = pool.disabled
        ? undefined
        : await inWorker(loader, program, inputsJson, limits, host)
      return outcome ?? inlineProgramRunner.run(loader, program, inputsJson, limits, host)
    },
    prewarm(loader = importQuickJs) {
      pool.fill(loader)
    },
    stats: () => ({ ...pool.stats(), fallback: pool.disabled }),
    close() {
      void pool.close()
    },
  }
}

/** The runner `isoagent/browser` installs where `Worker` exists: one pool per page. */
export const browserProgramRunner: BrowserProgramRunner = createBrowserProgramRunner()
