import type {
  ProgramWorkerCall,
  ProgramWorkerPort,
  ProgramWorkerRequest,
} from './program-worker-protocol.ts'
import { importQuickJs, type QuickJsLoader } from './quickjs-loader.ts'
import { poolFor, type QuickJsPool } from './quickjs-pool.ts'
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
 * before the guest's runtime is freed. An instance is made ready as soon as `init` arrives.
 */
export function serveProgramWorker(port: ProgramWorkerPort): void {
  let pool: QuickJsPool | undefined
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
    const ready = pool
    // One instance ready before the first program arrives (its load is off the host's thread).
    void ready.acquire().then(
      (instance) => {
        ready.release(instance, true)
        port.post({ type: 'ready' })
      },
      () => port.post({ type: 'ready' }),
    )
  }

  const run = async (request: Extract<ProgramWorkerRequest, { type: 'run' }>) => {
    controller = new AbortController()
    pool ??= poolFor(importQuickJs)
    try {
      await pool.acquire().then((instance) => pool!.release(instance, true))
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      port.post({ type: 'unavailable', message })
      return
    }
    await runProgram(pool, request.program, request.inputsJson, request.limits, {
      signal: controller.signal,
      callTool: () => Promise.reject(new Error('tool calls go through callRaw')),
      callRaw,
      onOutcome: (outcome) => {
        waiting.clear()
        calls = []
        port.post({ type: 'done', outcome })
      },
    })
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
