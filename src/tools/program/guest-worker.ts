// The host's side of one program worker, whatever runs it (a Node worker thread, a browser Web
// Worker): what `guest-pool.ts` and `drive-guest.ts` need of it, so each runtime is a thin driver
// that adapts its own worker API to this port.
import type { ProgramWorkerReply, ProgramWorkerRequest } from './program-worker-protocol.ts'

/** Why a worker stopped or failed by itself (not because the host terminated it). */
export interface GuestWorkerFailure {
  /** What the runtime said (an uncaught error's message, or the thread's exit code). */
  message: string
  /** The worker ran out of its heap (Node's `ERR_WORKER_OUT_OF_MEMORY`). */
  outOfMemory?: boolean
}

/** The events a {@link GuestWorker} emits. */
export interface GuestWorkerEvents {
  /** A reply of the worker (see `program-worker-protocol.ts`). */
  message: ProgramWorkerReply
  /**
   * The worker failed or exited by itself; after this it serves nothing (the host terminates it
   * to be sure). Not emitted for a {@link GuestWorker.terminate} the host asked for.
   */
  error: GuestWorkerFailure
}

/**
 * A program worker as the host drives it: post requests, listen to replies and failures,
 * terminate it. Listeners run in the order they were added (both EventEmitter and EventTarget
 * do), so the pool's bookkeeping listener, added at spawn, runs before a run's.
 */
export interface GuestWorker {
  /** Send a request (structured clone; a `WebAssembly.Module` is shared, not copied). */
  post(request: ProgramWorkerRequest): void
  on<K extends keyof GuestWorkerEvents>(
    type: K,
    listener: (event: GuestWorkerEvents[K]) => void,
  ): void
  off<K extends keyof GuestWorkerEvents>(
    type: K,
    listener: (event: GuestWorkerEvents[K]) => void,
  ): void
  /** Stop the worker now, whatever it is doing (a guest in a C loop included). */
  terminate(): void | Promise<void>
  /**
   * Whether the worker should keep the host's process alive: true while it runs a program, false
   * while idle (Node's `ref`/`unref`; browsers have nothing to do).
   */
  hold?(busy: boolean): void
}
