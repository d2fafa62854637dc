// Messages between the program worker pool (main thread) and a program worker.
import type { ProgramLimits, ProgramOutcome, ProgramSource } from '../../src/index.ts'

/** `workerData` of a program worker: the compiled QuickJS module it instantiates. */
export interface ProgramWorkerStart {
  module: WebAssembly.Module
}

/** Main thread → worker. */
export type ProgramWorkerRequest =
  | { type: 'run'; program: ProgramSource; inputsJson: string; limits: ProgramLimits }
  /** Answers to the guest's tool calls, batched: every answer that arrived in one turn. */
  | { type: 'answers'; answers: { id: number; json: string }[] }
  | { type: 'abort' }

/** Worker → main thread. */
export type ProgramWorkerReply =
  | { type: 'ready' }
  | { type: 'call'; id: number; name: string; argsJson: string }
  | { type: 'done'; outcome: ProgramOutcome }
