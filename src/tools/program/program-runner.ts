import { nextTurn } from '../../event-loop.ts'
import type { QuickJsLoader } from './quickjs-loader.ts'
import { poolFor } from './quickjs-pool.ts'
import {
  runProgram,
  type ProgramHost,
  type ProgramLimits,
  type ProgramOutcome,
  type ProgramSource,
} from './run-program.ts'

/**
 * Where the `program` tool runs a guest. The port exists because only some runtimes can stop a
 * guest from outside: QuickJS's interrupt handler stops bytecode, but a built-in that loops in C
 * (`Array.prototype.includes.call({ length: 2 ** 40 }, 1)`) never reaches it, so a guest on the
 * host's own thread can hold that thread as long as the loop runs.
 * - {@link inlineProgramRunner} (the default, and the only choice in workerd): on the calling
 *   thread, with the natively looping built-ins bounded before the program runs.
 * - Node.js: `nodeProgramRunner` from `isoagent/node`, a pool of warm worker threads, each
 *   terminated at its program's deadline.
 * A runner never throws for what a program does (that is an outcome); it rejects only when it
 * cannot run programs at all (QuickJS not loadable), which the tool reports as `unsupported`.
 */
export interface ProgramRunner {
  run(
    loader: QuickJsLoader,
    program: ProgramSource,
    inputsJson: string,
    limits: ProgramLimits,
    host: ProgramHost,
  ): Promise<ProgramOutcome>
}

/**
 * Runs the guest on the calling thread, over the loader's shared pool of QuickJS instances, with
 * the native-loop bounds of `native-bounds.ts` installed (see docs/tools/program.md for the limit
 * that remains). A guest holds the thread while it runs, and a caller that runs programs one
 * after another (a workflow's steps that do no I/O) would hold it for all of them: each run first
 * yields to the event loop, so a request (a cancel) is served between programs; a run cancelled
 * meanwhile ends as `cancelled` before its guest starts.
 */
export const inlineProgramRunner: ProgramRunner = {
  async run(loader, program, inputsJson, limits, host) {
    await nextTurn()
    return runProgram(poolFor(loader), program, inputsJson, limits, { ...host, boundNatives: true })
  },
}

let defaultRunner: ProgramRunner = inlineProgramRunner

/**
 * Make `runner` the one the `program` tool uses (the Node.js wiring of this package installs its
 * worker pool this way; read at each call, so the order of imports does not matter).
 */
export function setDefaultProgramRunner(runner: ProgramRunner): void {
  defaultRunner = runner
}

/** The runner the `program` tool uses now. */
export function defaultProgramRunner(): ProgramRunner {
  return defaultRunner
}
