import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Worker } from 'node:worker_threads'
import type { ProgramRunner, QuickJsLoader } from '../../src/index.ts'
import { driveGuest, stoppedOutcome } from '../../src/tools/program/drive-guest.ts'
import { createGuestPool } from '../../src/tools/program/guest-pool.ts'
import type { GuestWorker, GuestWorkerFailure } from '../../src/tools/program/guest-worker.ts'
import type { ProgramWorkerRequest } from '../../src/tools/program/program-worker-protocol.ts'
import { nodeQuickJs } from './node-quickjs.ts'
import { workerExecArgv } from './worker-exec-argv.ts'

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

/** A worker thread as the pool's {@link GuestWorker}: its exit (with the error before it) fails it. */
function threadWorker(entry: URL): GuestWorker {
  // Loaded at the first program, so a process that runs none never loads worker_threads.
  const { Worker } = process.getBuiltinModule('node:worker_threads')
  const worker: Worker = new Worker(entry, {
    execArgv: workerExecArgv(),
    resourceLimits: { maxOldGenerationSizeMb: 256, stackSizeMb: 4 },
  })
  const failed = new Set<(failure: GuestWorkerFailure) => void>()
  let error: unknown
  worker.on('error', (e) => {
    error = e
  })
  worker.on('exit', (code) => {
    const failure: GuestWorkerFailure = {
      message: error instanceof Error ? error.message : `exit code ${code}`,
      outOfMemory: (error as { code?: unknown } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY',
    }
    for (const listener of [...failed]) listener(failure)
  })
  return {
    post: (request: ProgramWorkerRequest) => worker.postMessage(request),
    on(type, listener) {
      if (type === 'message') worker.on('message', listener)
      else failed.add(listener as (failure: GuestWorkerFailure) => void)
    },
    off(type, listener) {
      if (type === 'message') worker.off('message', listener)
      else failed.delete(listener as (failure: GuestWorkerFailure) => void)
    },
    terminate: async () => {
      await worker.terminate()
    },
    hold: (busy) => (busy ? worker.ref() : worker.unref()),
  }
}

/** A pool of warm program workers; most callers use the shared {@link nodeProgramRunner}. */
export function createNodeProgramRunner(options: NodeProgramRunnerOptions = {}): NodeProgramRunner {
  const graceMs = options.killGraceMs ?? 250
  let entry: URL | undefined
  const pool = createGuestPool({
    maxWorkers: Math.max(1, options.maxWorkers ?? 8),
    warmWorkers: Math.max(0, options.warmWorkers ?? 2),
    spawn: () => threadWorker((entry ??= workerEntry())),
    moduleOf: async (loader) => (await loader()).module ?? (await nodeQuickJs()).module!,
  })
  return {
    async run(loader, program, inputsJson, limits, host) {
      const startedAt = Date.now()
      const slot = await pool.take(loader, host.signal)
      if (slot === undefined)
        return stoppedOutcome('cancelled', { toolCalls: 0, startedAt }, limits, 'thread')
      try {
        await pool.module(loader)
      } catch (error) {
        pool.giveBack(slot, false)
        throw error
      }
      return driveGuest(
        slot.worker,
        { program, inputsJson, limits, host, startedAt },
        { graceMs, unit: 'thread', release: (reusable) => pool.giveBack(slot, reusable) },
      )
    },
    async prewarm(loader = nodeQuickJs) {
      pool.fill(loader)
      await pool.module(loader)
    },
    stats: () => pool.stats(),
    close: () => pool.close(),
  }
}

/** The runner `isoagent/node` installs: one pool of program workers per process. */
export const nodeProgramRunner: NodeProgramRunner = createNodeProgramRunner()
