import type {
  ProgramWorkerCall,
  ProgramWorkerPort,
  ProgramWorkerRequest,
} from './program-worker-protocol.ts'
import { importQuickJs, type QuickJsLoader } from './quickjs-loader.ts'
import { poolFor, type QuickJsPool } from './quickjs-pool.ts'
import { prepareGuest, type Guest } from './guest.ts'
import { runProgram } from './run-program.ts'

/** A loader over the module the host posted, or QuickJS's own loading when it posted none. */
function loaderFor(module: WebAssembly.Module | undefined): QuickJsLoader {
  if (module === undefined) return importQuickJs
  return async () => ({ variant: (await importQuickJs()).variant, module })
}

/**
 * The body of a program worker (a Node worker thread, a browser Web Worker): runs one guest at a
 * time on the worker's own thread, so its host can terminate the thread at the deadline whatever
 * the guest is doing (a C loop in QuickJS never yields). The guest's tool calls go back to the
 * host, batched per turn, and run there through the session's kernel; the outcome is posted
 * before the guest's runtime is freed. The next guest (a fresh runtime and context, the prelude
 * evaluated) is prepared while the worker waits: once `init` arrives, and after each program.
 */
export function serveProgramWorker(port: ProgramWorkerPort): void {
  let pool: QuickJsPool | undefined
  let next: Promise<Guest> | undefined
  const prepareNext = (from: QuickJsPool) => {
    const guest = prepareGuest(from, false)
    guest.catch(() => {
      if (next === guest) next = undefined
    })
    next = guest
    return guest
  }
  let lastId = 0
  const waiting = new Map<number, (json: string) => void>()
  let controller = new AbortController()
  let calls: ProgramWorkerCall[] = []
  const flushCalls = () => {
    if (calls.length === 0) return
    port.post({ type: 'calls', calls })
    calls = []
  }
  const callRaw = (name: string, argsJson: string) =>
    new Promise<string>((resolve) => {
      const id = ++lastId
      waiting.set(id, resolve)
      if (calls.push({ id, name, argsJson }) === 1) queueMicrotask(flushCalls)
    })

  const init = (module: WebAssembly.Module | undefined) => {
    pool = poolFor(loaderFor(module))
    // A guest ready before the first program arrives (QuickJS loads off the host's thread).
    void prepareNext(pool).then(
      () => port.post({ type: 'ready' }),
      () => port.post({ type: 'ready' }),
    )
  }

  const run = async (request: Extract<ProgramWorkerRequest, { type: 'run' }>) => {
    controller = new AbortController()
    const from = (pool ??= poolFor(importQuickJs))
    let guest: Guest
    try {
      guest = await (next ?? prepareNext(from))
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      port.post({ type: 'unavailable', message })
      return
    }
    next = undefined
    await runProgram(
      from,
      request.program,
      request.inputsJson,
      request.limits,
      {
        signal: controller.signal,
        callTool: () => Promise.reject(new Error('tool calls go through callRaw')),
        callRaw,
        onOutcome: (outcome) => {
          waiting.clear()
          calls = []
          port.post({ type: 'done', outcome })
        },
      },
      guest,
    )
    // The runtime is freed and its instance back in the pool: the next guest is made now.
    prepareNext(from)
  }

  port.listen((request) => {
    switch (request.type) {
      case 'init':
        init(request.module)
        return
      case 'answers':
        for (const { id, json } of request.answers) {
          const resolve = waiting.get(id)
          waiting.delete(id)
          resolve?.(json)
        }
        return
      case 'abort':
        controller.abort()
        return
      case 'run':
        void run(request)
    }
  })
}
