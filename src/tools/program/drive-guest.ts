// The host's side of one program run in a worker (Node thread or Web Worker): post `run`, forward
// the guest's `ctx` calls to the host's kernel and post their answers back batched per turn, and
// end the run on `done`, on the worker's failure, at the deadline (plus a grace) or at
// cancellation (an `abort`, then the worker terminated after the grace). Web-standard only.
import type { GuestWorker, GuestWorkerFailure } from './guest-worker.ts'
import type { ProgramWorkerCall, ProgramWorkerReply } from './program-worker-protocol.ts'
import {
  callToolJson,
  type ProgramHost,
  type ProgramLimits,
  type ProgramOutcome,
  type ProgramSource,
} from './run-program.ts'

/** What one run in a worker is given. */
export interface GuestJob {
  program: ProgramSource
  inputsJson: string
  limits: ProgramLimits
  host: ProgramHost
  /** `Date.now()` when the call began (a wait for a free worker counts). */
  startedAt: number
}

/** How {@link driveGuest} ends a run the guest does not end itself. */
export interface DriveOptions {
  /** How long past the deadline (or cancellation) before the worker is terminated. */
  graceMs: number
  /** What the runtime calls a worker, in messages ("thread", "worker"). */
  unit: string
  /** Called once when the run ends: whether the worker may serve another run. */
  release(reusable: boolean): void
}

interface Facts {
  toolCalls: number
  startedAt: number
}

type Stopped = 'timeout' | 'cancelled' | 'memory' | 'crash'

/** The outcome of a run the host ended, or the worker's failure ended. */
export function stoppedOutcome(
  status: Stopped,
  facts: Facts,
  limits: ProgramLimits,
  unit: string,
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
        message: `the program ran past timeoutMs (${limits.timeoutMs} ms) inside a built-in that does not yield; its ${unit} was terminated`,
      }
    case 'memory':
      return {
        ...base,
        status: 'limit',
        limit: 'memory',
        message: `the program's ${unit} ran out of memory (${detail})`,
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

/**
 * Run `job` in `worker` (lent by the pool, its guest ready or being made). Resolves with the
 * outcome; rejects only when the worker cannot load QuickJS (`unavailable`), which the tool
 * reports as `unsupported`. `options.release` is called exactly once, before it settles.
 */
export function driveGuest(
  worker: GuestWorker,
  job: GuestJob,
  options: DriveOptions,
): Promise<ProgramOutcome> {
  const { host, limits } = job
  const facts: Facts = { toolCalls: 0, startedAt: job.startedAt }
  return new Promise((resolve, reject) => {
    let settled = false
    let answers: { id: number; json: string }[] = []
    let abortTimer: ReturnType<typeof setTimeout> | undefined

    const finish = (outcome: ProgramOutcome | Error, reusable: boolean) => {
      if (settled) return
      settled = true
      clearTimeout(deadline)
      clearTimeout(abortTimer)
      worker.off('message', onMessage)
      worker.off('error', onError)
      host.signal.removeEventListener('abort', onAbort)
      options.release(reusable)
      if (outcome instanceof Error) reject(outcome)
      else resolve(outcome)
    }
    const stop = (status: Stopped, detail?: string) =>
      finish(stoppedOutcome(status, facts, limits, options.unit, detail), false)

    /** Every answer that arrived in one turn goes to the worker in one message. */
    const flush = () => {
      if (settled || answers.length === 0) return
      worker.post({ type: 'answers', answers })
      answers = []
    }
    const forward = (call: ProgramWorkerCall) => {
      facts.toolCalls++
      void callToolJson(host, call.name, call.argsJson).then((json) => {
        if (settled) return
        if (answers.push({ id: call.id, json }) === 1) queueMicrotask(flush)
      })
    }
    const onMessage = (reply: ProgramWorkerReply) => {
      if (reply.type === 'done') finish(reply.outcome, true)
      else if (reply.type === 'calls') for (const call of reply.calls) forward(call)
      else if (reply.type === 'unavailable') finish(new Error(reply.message), false)
    }
    const onError = (failure: GuestWorkerFailure) =>
      stop(failure.outOfMemory === true ? 'memory' : 'crash', failure.message)
    const onAbort = () => {
      if (settled) return
      worker.post({ type: 'abort' })
      abortTimer ??= setTimeout(() => stop('cancelled'), options.graceMs)
    }

    const deadline = setTimeout(() => stop('timeout'), limits.timeoutMs + options.graceMs)
    worker.on('message', onMessage)
    worker.on('error', onError)
    host.signal.addEventListener('abort', onAbort, { once: true })
    worker.post({ type: 'run', program: job.program, inputsJson: job.inputsJson, limits })
    if (host.signal.aborted) onAbort()
  })
}
