import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Worker } from 'node:worker_threads'
import type {
  ProgramHost,
  ProgramLimits,
  ProgramOutcome,
  ProgramRunner,
  ProgramSource,
  QuickJsLoader,
} from '../../src/index.ts'
import { callToolJson } from '../../src/tools/program/run-program.ts'
import { nodeQuickJs } from './node-quickjs.ts'
import type {
  ProgramWorkerCall,
  ProgramWorkerReply,
  ProgramWorkerRequest,
} from '../../src/tools/program/program-worker-protocol.ts'

/** Options of {@link createNodeProgramRunner}. */
export interface NodeProgramRunnerOptions {
  /** Programs running at once (each in its own thread); more wait for a free one. Default 8. */
  maxWorkers?: number
  /** Idle workers kept warm (QuickJS loaded, an instance ready). Default 2. */
  warmWorkers?: number
  /**
   * How long past its deadline (or its cancellation) a guest may take to stop by itself before
   * its thread is terminated. Default 250 ms.
   */
  killGraceMs?: number
}

/** The Node.js program runner: guests in worker threads, terminated at their deadline. */
export interface NodeProgramRunner extends ProgramRunner {
  /** Start the warm workers for `loader`'s QuickJS now (the first program then waits less). */
  prewarm(loader?: QuickJsLoader): Promise<void>
  /** Workers alive now, busy and idle (for tests and benchmarks). */
  stats(): { busy: number; idle: number; spawned: number; terminated: number }
  /** Terminate every worker (idle ones at once; running programs end as cancelled). */
  close(): Promise<void>
}

interface Slot {
  worker: Worker
  pool: ModulePool
  dead: boolean
  /** QuickJS loaded and an instance waiting (the worker said `ready`). */
  ready: boolean
  /** The run using the worker, told when the thread dies. */
  onExit?: (code: number, error: unknown) => void
}

/** The workers of one loader's QuickJS. */
interface ModulePool {
  loader: QuickJsLoader
  idle: Slot[]
}

/**
 * How to start a worker: the built `program-worker.js` next to this file (also in the CLI bundle),
 * or, from the TypeScript source (tests, benchmarks), `program-worker.ts` bundled by esbuild (a dev
 * dependency) into a file under the temp directory, kept while no input file is newer (loading
 * the source modules through a TypeScript loader in each new thread would cost seconds).
 */
function workerEntry(): URL {
  if (!import.meta.url.endsWith('.ts')) return new URL('./program-worker.js', import.meta.url)
  const source = fileURLToPath(new URL('./program-worker.ts', import.meta.url))
  const key = process
    .getBuiltinModule('node:crypto')
    .createHash('sha1')
    .update(source)
    .digest('hex')
    .slice(0, 12)
  const dir = join(tmpdir(), `isoagent-program-worker-${key}`)
  const outfile = join(dir, 'worker.mjs')
  const inputsFile = join(dir, 'inputs.json')
  if (bundleFresh(outfile, inputsFile)) return pathToFileURL(outfile)
  mkdirSync(dir, { recursive: true })
  const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild')
  const partial = join(dir, `worker-${process.pid}.mjs`)
  const result = esbuild.buildSync({
    entryPoints: [source],
    outfile: partial,
    absWorkingDir: dirname(source),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    metafile: true,
    logLevel: 'silent',
  })
  const inputs = Object.keys(result.metafile.inputs).map((p) => resolve(dirname(source), p))
  writeFileSync(inputsFile, JSON.stringify(inputs))
  renameSync(partial, outfile)
  return pathToFileURL(outfile)
}

function bundleFresh(outfile: string, inputsFile: string): boolean {
  try {
    const built = statSync(outfile).mtimeMs
    const inputs = JSON.parse(readFileSync(inputsFile, 'utf8')) as string[]
    return inputs.every((input) => statSync(input).mtimeMs < built)
  } catch {
    return false
  }
}

/**
 * The process's Node flags a worker can take: all but `--input-type`, which Node refuses in a
 * worker (a host started as `node --input-type=module -e ...` would otherwise fail every program).
 */
function workerExecArgv(): string[] {
  const out: string[] = []
  const args = process.execArgv
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--input-type') i++
    else if (!args[i]!.startsWith('--input-type=')) out.push(args[i]!)
  }
  return out
}

const send = (worker: Worker, request: ProgramWorkerRequest) => worker.postMessage(request)

function stopped(
  status: 'timeout' | 'cancelled' | 'memory' | 'crash',
  facts: { toolCalls: number; startedAt: number },
  limits: ProgramLimits,
  detail = '',
): ProgramOutcome {
  const base = {
    toolCalls: facts.toolCalls,
    durationMs: Date.now() - facts.startedAt,
    logs: [],
    logsDropped: 0,
    memoryBytes: 0,
  }
  switch (status) {
    case 'cancelled':
      return { ...base, status: 'cancelled' }
    case 'timeout':
      return {
        ...base,
        status: 'limit',
        limit: 'timeout',
        message: `the program ran past timeoutMs (${limits.timeoutMs} ms) inside a built-in that does not yield; its thread was terminated`,
      }
    case 'memory':
      return {
        ...base,
        status: 'limit',
        limit: 'memory',
        message: `the program's thread ran out of memory (${detail})`,
      }
    case 'crash':
      return {
        ...base,
        status: 'error',
        errorName: 'InternalError',
        message: `the program's interpreter failed: ${detail}`,
        stack: '',
      }
  }
}

/** A pool of warm program workers; most callers use the shared {@link nodeProgramRunner}. */
export function createNodeProgramRunner(options: NodeProgramRunnerOptions = {}): NodeProgramRunner {
  const maxWorkers = Math.max(1, options.maxWorkers ?? 8)
  const warmWorkers = Math.max(0, options.warmWorkers ?? 2)
  const graceMs = options.killGraceMs ?? 250
  let entry: URL | undefined
  const modules = new WeakMap<QuickJsLoader, Promise<WebAssembly.Module>>()
  const pools = new WeakMap<QuickJsLoader, ModulePool>()
  const alive = new Set<Slot>()
  const waiters: (() => void)[] = []
  let spawned = 0
  let terminated = 0
  let busy = 0

  const moduleOf = (loader: QuickJsLoader): Promise<WebAssembly.Module> => {
    let module = modules.get(loader)
    if (module === undefined) {
      module = (async () => (await loader()).module ?? (await nodeQuickJs()).module!)()
      module.catch(() => modules.delete(loader))
      modules.set(loader, module)
    }
    return module
  }
  const poolOf = (loader: QuickJsLoader): ModulePool => {
    let pool = pools.get(loader)
    if (pool === undefined) {
      pool = { loader, idle: [] }
      pools.set(loader, pool)
    }
    return pool
  }

  const spawn = (pool: ModulePool): Slot => {
    entry ??= workerEntry()
    // Loaded at the first program, so a process that runs none never loads worker_threads.
    const { Worker } = process.getBuiltinModule('node:worker_threads')
    const worker = new Worker(entry, {
      execArgv: workerExecArgv(),
      resourceLimits: { maxOldGenerationSizeMb: 256, stackSizeMb: 4 },
    })
    // The thread starts while QuickJS is still compiling on this one (the first program of a
    // process waits for the longer of the two, not their sum); the module follows when ready.
    moduleOf(pool.loader).then(
      (module) => send(worker, { type: 'init', module }),
      () => {},
    )
    const slot: Slot = { worker, pool, dead: false, ready: false }
    spawned++
    alive.add(slot)
    let failure: unknown
    const onReady = (reply: ProgramWorkerReply) => {
      if (reply.type !== 'ready') return
      slot.ready = true
      worker.off('message', onReady)
    }
    worker.on('message', onReady)
    worker.on('error', (error) => {
      failure = error
    })
    worker.on('exit', (code) => {
      slot.dead = true
      alive.delete(slot)
      const index = pool.idle.indexOf(slot)
      if (index >= 0) pool.idle.splice(index, 1)
      slot.onExit?.(code, failure)
    })
    worker.unref()
    return slot
  }
  const fill = (pool: ModulePool) => {
    while (pool.idle.length < warmWorkers && alive.size < maxWorkers) pool.idle.push(spawn(pool))
  }
  const freed = () => waiters.shift()?.()

  const take = async (pool: ModulePool, signal: AbortSignal): Promise<Slot | undefined> => {
    for (;;) {
      if (signal.aborted) return undefined
      // The oldest ready worker first: a fresh one may still be loading QuickJS.
      const index = pool.idle.findIndex((s) => s.ready && !s.dead)
      const ready = index >= 0 ? pool.idle.splice(index, 1)[0] : pool.idle.shift()
      if (ready !== undefined && !ready.dead) return ready
      if (ready !== undefined) continue
      if (alive.size < maxWorkers) return spawn(pool)
      // Every worker is busy (or idle for another module): drop one idle elsewhere, or wait.
      const other = [...alive].find((s) => s.onExit === undefined && s.pool !== pool)
      if (other !== undefined) {
        other.dead = true
        void other.worker.terminate()
        terminated++
        alive.delete(other)
        continue
      }
      await new Promise<void>((resolve) => {
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
  }

  const giveBack = (slot: Slot, reusable: boolean) => {
    slot.onExit = undefined
    busy--
    if (reusable && !slot.dead && slot.pool.idle.length < warmWorkers) {
      slot.worker.unref()
      slot.pool.idle.push(slot)
    } else if (!slot.dead) {
      slot.dead = true
      alive.delete(slot)
      terminated++
      void slot.worker.terminate()
    }
    // A terminated worker is replaced at once, off the caller's path.
    fill(slot.pool)
    freed()
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
      let flushQueued = false
      let abortTimer: ReturnType<typeof setTimeout> | undefined
      const post = (request: ProgramWorkerRequest) => send(worker, request)
      const flush = () => {
        flushQueued = false
        if (settled || answers.length === 0) return
        post({ type: 'answers', answers })
        answers = []
      }
      const finish = (outcome: ProgramOutcome | Error, reusable: boolean) => {
        if (settled) return
        settled = true
        clearTimeout(deadline)
        clearTimeout(abortTimer)
        worker.off('message', onMessage)
        host.signal.removeEventListener('abort', onAbort)
        giveBack(slot, reusable)
        if (outcome instanceof Error) reject(outcome)
        else resolve(outcome)
      }
      const kill = (status: 'timeout' | 'cancelled') => {
        if (settled) return
        finish(stopped(status, facts, limits), false)
      }
      const onMessage = (reply: ProgramWorkerReply) => {
        if (reply.type === 'done') finish(reply.outcome, true)
        else if (reply.type === 'calls') for (const call of reply.calls) forward(call)
        else if (reply.type === 'unavailable') finish(new Error(reply.message), false)
      }
      const forward = (call: ProgramWorkerCall) => {
        facts.toolCalls++
        void callToolJson(host, call.name, call.argsJson).then((json) => {
          if (settled) return
          answers.push({ id: call.id, json })
          if (!flushQueued) {
            flushQueued = true
            queueMicrotask(flush)
          }
        })
      }
      const onAbort = () => {
        if (settled) return
        post({ type: 'abort' })
        abortTimer ??= setTimeout(() => kill('cancelled'), graceMs)
      }
      slot.onExit = (code, error) => {
        const message = error instanceof Error ? error.message : `exit code ${code}`
        const outOfMemory =
          (error as { code?: unknown } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY'
        finish(stopped(outOfMemory ? 'memory' : 'crash', facts, limits, message), false)
      }
      const deadline = setTimeout(() => kill('timeout'), limits.timeoutMs + graceMs)
      worker.on('message', onMessage)
      worker.ref()
      host.signal.addEventListener('abort', onAbort, { once: true })
      post({ type: 'run', program, inputsJson, limits })
      if (host.signal.aborted) onAbort()
    })

  return {
    async run(loader, program, inputsJson, limits, host) {
      const startedAt = Date.now()
      const pool = poolOf(loader)
      const slot = await take(pool, host.signal)
      if (slot === undefined) return stopped('cancelled', { toolCalls: 0, startedAt }, limits)
      busy++
      try {
        await moduleOf(loader)
      } catch (error) {
        giveBack(slot, false)
        throw error
      }
      return drive(slot, program, inputsJson, limits, host, startedAt)
    },
    async prewarm(loader = nodeQuickJs) {
      const pool = poolOf(loader)
      fill(pool)
      await moduleOf(loader)
    },
    stats: () => ({ busy, idle: alive.size - busy, spawned, terminated }),
    async close() {
      const all = [...alive]
      alive.clear()
      await Promise.all(
        all.map((slot) => {
          slot.dead = true
          return slot.worker.terminate()
        }),
      )
    },
  }
}

/** The runner `isoagent/node` installs: one pool of program workers per process. */
export const nodeProgramRunner: NodeProgramRunner = createNodeProgramRunner()
