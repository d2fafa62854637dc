// A program worker: runs one guest at a time in its own thread, so the main thread can terminate
// it at the deadline whatever the guest is doing (a C loop in QuickJS never yields). Tool calls go
// back to the main thread, which runs them through the session's kernel.
import { parentPort, workerData } from 'node:worker_threads'
// Only the program modules: the core's index would load every tool into each thread.
import { importQuickJs, type QuickJsLoader } from '../../src/tools/program/quickjs-loader.ts'
import { poolFor } from '../../src/tools/program/quickjs-pool.ts'
import { runProgram } from '../../src/tools/program/run-program.ts'
import type {
  ProgramWorkerCall,
  ProgramWorkerReply,
  ProgramWorkerRequest,
  ProgramWorkerStart,
} from './program-worker-protocol.ts'

const port = parentPort!
const { module } = workerData as ProgramWorkerStart
const loader: QuickJsLoader = async () => ({ variant: (await importQuickJs()).variant, module })
const pool = poolFor(loader)

const post = (reply: ProgramWorkerReply) => port.postMessage(reply)
let lastId = 0
const waiting = new Map<number, (json: string) => void>()
let controller = new AbortController()
let calls: ProgramWorkerCall[] = []
const flushCalls = () => {
  if (calls.length === 0) return
  post({ type: 'calls', calls })
  calls = []
}

port.on('message', (request: ProgramWorkerRequest) => {
  switch (request.type) {
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

async function run(request: Extract<ProgramWorkerRequest, { type: 'run' }>): Promise<void> {
  controller = new AbortController()
  const outcome = await runProgram(pool, request.program, request.inputsJson, request.limits, {
    signal: controller.signal,
    callTool: () => Promise.reject(new Error('tool calls go through callRaw')),
    callRaw: (name, argsJson) =>
      new Promise<string>((resolve) => {
        const id = ++lastId
        waiting.set(id, resolve)
        if (calls.push({ id, name, argsJson }) === 1) queueMicrotask(flushCalls)
      }),
  })
  waiting.clear()
  calls = []
  post({ type: 'done', outcome })
}

// One instance ready before the first program arrives (its load is off the main thread).
void pool.acquire().then(
  (instance) => {
    pool.release(instance, true)
    post({ type: 'ready' })
  },
  () => post({ type: 'ready' }),
)
