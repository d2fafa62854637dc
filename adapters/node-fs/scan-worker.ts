import { realpathSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { IsoagentError } from '../../src/errors.ts'
import { runFileScanJob, runTreeListJob, runTreeScanJob } from '../../src/tools/search/scan-job.ts'
import type {
  FileScanJob,
  TreeListOutcome,
  TreeListRequest,
  TreeScanOutcome,
  TreeScanRequest,
} from '../../src/workspace/file-scanner.ts'
import type { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import type { ByteRange, ListOptions } from '../../src/workspace/workspace-services.ts'
import { localFiles, type DirHint, type LocalFilesOptions } from './local-files.ts'

// A search worker: it loads only the scan and the local read path, so it is up in tens of ms.

/**
 * Messages a scan worker takes: a batch of files, or a directory, to scan, or a directory to walk
 * for a glob. `cancel` is a shared flag the pool sets to 1 when the request's search is cancelled.
 */
export type ScanWorkerRequest =
  | {
      type: 'scan'
      id: number
      job: FileScanJob
      paths: WorkspacePath[]
      /** Directories the calling thread has checked, adopted for the rest of their cache time. */
      hints: DirHint[]
      cancel: Int32Array | undefined
    }
  | {
      type: 'tree'
      id: number
      job: FileScanJob
      tree: TreeScanRequest
      /** Directories the calling thread has checked, adopted for the rest of their cache time. */
      hints: DirHint[]
      cancel: Int32Array | undefined
    }
  | {
      type: 'list'
      id: number
      tree: TreeListRequest
      /** Directories the calling thread has checked, adopted for the rest of their cache time. */
      hints: DirHint[]
      cancel: Int32Array | undefined
    }

/** What a scan worker answers for a batch. */
export type ScanWorkerReply =
  | { id: number; outcomes: Awaited<ReturnType<typeof runFileScanJob>> }
  | { id: number; tree: TreeScanOutcome[] }
  | { id: number; list: TreeListOutcome[] }
  | { id: number; failed: string; cancelled: boolean }

/** The data a scan worker starts with: the workspace's real root and its read settings. */
export interface ScanWorkerData {
  root: string
  options: LocalFilesOptions
}

/** What the pool adds: a shared flag the worker sets to 1 once it has loaded. */
interface ScanWorkerStart extends ScanWorkerData {
  ready: Int32Array
}

const port = parentPort!
const { root, options, ready } = workerData as ScanWorkerStart
// The root was resolved by the workspace; a worker that finds it changed refuses to start.
if (realpathSync.native(root) !== root) throw new Error(`workspace root ${root} moved`)
const files = localFiles(root, options)
/**
 * The workspace side a request reads through. Every read, listing and stat first looks at the
 * request's cancellation flag and aborts `controller` once it is set: the scan and the walk
 * check the signal right after, so a cancelled request stops at its next file or directory.
 */
function readerFor(cancel: Int32Array | undefined, controller: AbortController) {
  const check = () => {
    if (cancel !== undefined && Atomics.load(cancel, 0) === 1) controller.abort()
  }
  return {
    read: (path: WorkspacePath, range?: ByteRange) => {
      check()
      return files.readRange(path, range)
    },
    readNow: (path: WorkspacePath, range?: ByteRange) => {
      check()
      return files.readNow(path, range)
    },
    readStream: (path: WorkspacePath, range?: ByteRange) => {
      check()
      return files.readStream(path, range)
    },
    list: async (path: WorkspacePath, options?: ListOptions) => {
      check()
      return files.listSync(path, options)
    },
    stat: (path: WorkspacePath) => {
      check()
      return files.stat(path)
    },
  }
}

/** Run one request; resolves to its reply (a failure is a reply too). */
function serve(message: ScanWorkerRequest): Promise<ScanWorkerReply> {
  files.seedDirs(message.hints)
  const controller = new AbortController()
  const reader = readerFor(message.cancel, controller)
  const work: Promise<ScanWorkerReply> =
    message.type === 'scan'
      ? runFileScanJob(reader, message.job, message.paths, controller.signal).then((outcomes) => ({
          id: message.id,
          outcomes,
        }))
      : message.type === 'tree'
        ? runTreeScanJob(reader, message.job, message.tree, controller.signal).then((tree) => ({
            id: message.id,
            tree,
          }))
        : runTreeListJob(reader, message.tree, controller.signal).then((list) => ({
            id: message.id,
            list,
          }))
  return work.catch((error: unknown) => ({
    id: message.id,
    failed: error instanceof Error ? error.message : String(error),
    cancelled: IsoagentError.is(error, 'cancelled'),
  }))
}

// One request at a time, oldest first: the search consumes replies in the order it sent them,
// and requests run side by side would all finish late (each waits on the others' reads).
const queue: ScanWorkerRequest[] = []
let running = false
async function drain() {
  running = true
  for (let message = queue.shift(); message !== undefined; message = queue.shift())
    port.postMessage(await serve(message))
  running = false
}
port.on('message', (message: ScanWorkerRequest) => {
  queue.push(message)
  if (!running) void drain()
})
Atomics.store(ready, 0, 1)
