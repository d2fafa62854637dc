// Messages between the program worker pool (main thread) and a program worker.
import type {
  ProgramLimits,
  ProgramOutcome,
  ProgramSource,
} from '../../src/tools/program/run-program.ts'

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
  /** The guest's tool calls, batched: every call it made in one turn. */
  | { type: 'calls'; calls: ProgramWorkerCall[] }
  | { type: 'done'; outcome: ProgramOutcome }

/** One tool call of the guest. */
export interface ProgramWorkerCall {
  id: number
  name: string
  argsJson: string
}
