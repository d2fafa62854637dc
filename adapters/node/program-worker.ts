// A program worker thread on Node.js (started by node-program-runner.ts): the shared worker body
// over `parentPort`. Only the program modules are imported: the core's index would load every
// tool into each thread.
import { parentPort } from 'node:worker_threads'
import type {
  ProgramWorkerReply,
  ProgramWorkerRequest,
} from '../../src/tools/program/program-worker-protocol.ts'
import { serveProgramWorker } from '../../src/tools/program/serve-program-worker.ts'

const port = parentPort!
serveProgramWorker({
  post: (reply: ProgramWorkerReply) => port.postMessage(reply),
  listen: (handler: (request: ProgramWorkerRequest) => void) => port.on('message', handler),
})
