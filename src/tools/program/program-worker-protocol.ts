// Messages between a program runner on the host's thread and a program worker (a Node worker
// thread or a browser Web Worker): one protocol for both, served by `serve-program-worker.ts`.
import type { ProgramLimits, ProgramOutcome, ProgramSource } from './run-program.ts'

/** Host → worker. */
export type ProgramWorkerRequest =
  /**
   * The first message: the compiled QuickJS module to instantiate, or none (the worker then
   * loads QuickJS by itself, as `importQuickJs` does).
   */
  | { type: 'init'; module?: WebAssembly.Module }
  | { type: 'run'; program: ProgramSource; inputsJson: string; limits: ProgramLimits }
  /** Answers to the guest's tool calls, batched: every answer that arrived in one turn. */
  | { type: 'answers'; answers: { id: number; json: string }[] }
  | { type: 'abort' }

/** Worker → host. */
export type ProgramWorkerReply =
  /** QuickJS loaded and an instance waiting (or loading failed: the first run reports it). */
  | { type: 'ready' }
  /** The guest's tool calls, batched: every call it made in one turn. */
  | { type: 'calls'; calls: ProgramWorkerCall[] }
  /** QuickJS could not be loaded in the worker: the run fails as `unsupported`. */
  | { type: 'unavailable'; message: string }
  /** Sent before the worker frees the guest's runtime (the host need not wait for that). */
  | { type: 'done'; outcome: ProgramOutcome }

/** One tool call of the guest. */
export interface ProgramWorkerCall {
  id: number
  name: string
  argsJson: string
}

/** The worker's side of the channel to its host. */
export interface ProgramWorkerPort {
  post(reply: ProgramWorkerReply): void
  listen(handler: (request: ProgramWorkerRequest) => void): void
}
