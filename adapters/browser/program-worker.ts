// A program Web Worker (started by browser-program-runner.ts as a module worker): the shared
// worker body over the worker's global scope. Only the program modules are imported: the core's
// index would load every tool into the worker.
import type {
  ProgramWorkerReply,
  ProgramWorkerRequest,
} from '../../src/tools/program/program-worker-protocol.ts'
import { serveProgramWorker } from '../../src/tools/program/serve-program-worker.ts'

/** The parts of a dedicated worker's global scope used here (the DOM typings call it Window). */
const scope = globalThis as unknown as {
  postMessage(message: ProgramWorkerReply): void
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void
}

serveProgramWorker({
  post: (reply) => scope.postMessage(reply),
  listen: (handler) =>
    scope.addEventListener('message', (event) => handler(event.data as ProgramWorkerRequest)),
})
