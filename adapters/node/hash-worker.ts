import { Worker } from 'node:worker_threads'
import { workerExecArgv } from './worker-exec-argv.ts'

// One worker thread per process hashes the temp files of downloads (SHA-256 is about 1 GB/s on
// one core: on the main thread it would cost a 1 GiB download a second). It reads the bytes back
// through the temp file's own descriptor (a worker shares the process's descriptors) from the page
// cache, trailing the part written so far, so no chunk is copied or posted between threads. The
// code is plain CommonJS started with `eval`: the same in the TypeScript sources, dist/ and the
// bundled CLI.
const SOURCE = `
const { parentPort } = require('node:worker_threads')
const { readSync } = require('node:fs')
const { createHash } = require('node:crypto')
const jobs = new Map()
const buffer = Buffer.allocUnsafe(1 << 20)
function advance(job, upTo) {
  while (job.hashed < upTo) {
    if (Atomics.load(job.stop, 0) === 1) throw new Error('stopped')
    const n = readSync(job.fd, buffer, 0, Math.min(buffer.length, upTo - job.hashed), job.hashed)
    if (n === 0) throw new Error('the temp file is shorter than written')
    job.hash.update(buffer.subarray(0, n))
    job.hashed += n
  }
}
parentPort.on('message', (m) => {
  if (m.op === 'open') {
    jobs.set(m.id, { fd: m.fd, stop: m.stop, hash: createHash('sha256'), hashed: 0 })
    return
  }
  if (m.op === 'close') {
    jobs.delete(m.id)
    parentPort.postMessage({ id: m.id, op: 'closed' })
    return
  }
  const job = jobs.get(m.id)
  if (job === undefined) {
    if (m.op === 'digest') parentPort.postMessage({ id: m.id, op: 'error', message: 'no such job' })
    return
  }
  try {
    advance(job, m.upTo)
    if (m.op === 'digest') {
      jobs.delete(m.id)
      parentPort.postMessage({ id: m.id, op: 'digest', hex: job.hash.digest('hex') })
    }
  } catch (error) {
    jobs.delete(m.id)
    parentPort.postMessage({ id: m.id, op: 'error', message: String((error && error.message) || error) })
  }
})
`

type Request =
  | { op: 'open'; id: number; fd: number; stop: Int32Array }
  | { op: 'advance' | 'digest'; id: number; upTo: number }
  | { op: 'close'; id: number }

type Reply =
  | { op: 'digest'; id: number; hex: string }
  | { op: 'error'; id: number; message: string }
  | { op: 'closed'; id: number }

interface Job {
  failure: Error | undefined
  onDigest: ((reply: Reply) => void) | undefined
  onClosed: (() => void) | undefined
}

/** SHA-256 of a file's first bytes, computed on the hash worker as the file grows. */
export interface WorkerHash {
  /** The first `length` bytes are written: hash on up to there. */
  advance(length: number): void
  /** SHA-256 (lower-case hex) of the first `length` bytes; ends the hash. */
  digest(length: number): Promise<string>
  /** Stop hashing and forget the descriptor; resolves once the worker no longer reads it. */
  close(): Promise<void>
}

let worker: Worker | undefined
/** Set when the worker failed: later files hash on the main thread. */
let broken = false
let nextId = 1
const jobs = new Map<number, Job>()

function dropAll(error: Error): void {
  for (const job of jobs.values()) {
    job.failure ??= error
    job.onDigest?.({ op: 'error', id: 0, message: error.message })
    job.onClosed?.()
  }
  jobs.clear()
}

function started(): Worker | undefined {
  if (broken) return undefined
  if (worker !== undefined) return worker
  let w: Worker
  try {
    w = new Worker(SOURCE, { eval: true, execArgv: workerExecArgv() })
  } catch {
    broken = true
    return undefined
  }
  w.on('message', (reply: Reply) => {
    const job = jobs.get(reply.id)
    if (job === undefined) return
    if (reply.op === 'closed') {
      jobs.delete(reply.id)
      job.onClosed?.()
    } else if (reply.op === 'error' && job.onDigest === undefined)
      job.failure = new Error(`hashing failed: ${reply.message}`)
    else job.onDigest?.(reply)
    if (jobs.size === 0) w.unref()
  })
  const fail = (error: Error) => {
    broken = true
    worker = undefined
    dropAll(error)
  }
  w.on('error', fail)
  w.on('exit', () => fail(new Error('the hash worker exited')))
  w.unref()
  worker = w
  return w
}

/**
 * A hash of the file open at descriptor `fd` on the process's hash worker, or undefined when
 * no worker can run (the caller then hashes on its own thread). The descriptor must stay open
 * until {@link WorkerHash.close} has resolved.
 */
export function workerHash(fd: number): WorkerHash | undefined {
  const w = started()
  if (w === undefined) return undefined
  const id = nextId++
  const stop = new Int32Array(new SharedArrayBuffer(4))
  const job: Job = { failure: undefined, onDigest: undefined, onClosed: undefined }
  jobs.set(id, job)
  w.ref()
  const post = (request: Request) => w.postMessage(request)
  post({ op: 'open', id, fd, stop })
  let closing: Promise<void> | undefined
  return {
    advance(length) {
      if (job.failure === undefined && jobs.has(id)) post({ op: 'advance', id, upTo: length })
    },
    digest(length) {
      if (job.failure !== undefined) return Promise.reject(job.failure)
      if (!jobs.has(id)) return Promise.reject(new Error('the hash was closed'))
      return new Promise<string>((resolve, reject) => {
        job.onDigest = (reply) => {
          job.onDigest = undefined
          if (reply.op === 'digest') resolve(reply.hex)
          else reject(new Error(`hashing failed: ${reply.op === 'error' ? reply.message : ''}`))
        }
        post({ op: 'digest', id, upTo: length })
      })
    },
    close() {
      if (closing !== undefined) return closing
      if (!jobs.has(id)) return (closing = Promise.resolve())
      Atomics.store(stop, 0, 1)
      closing = new Promise<void>((resolve) => {
        job.onClosed = resolve
        post({ op: 'close', id })
      })
      return closing
    },
  }
}
