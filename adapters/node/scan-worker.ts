import { realpathSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { IsoagentError } from '../../src/errors.ts'
import {
  runFileScanJob,
  runTreeListJob,
  runTreeScanJob,
} from '../../src/tools/search/pipeline/scan-job.ts'
import type {
  FileScanJob,
  TreeListOutcome,
  TreeListRequest,
  TreeScanRequest,
} from '../../src/workspace/file-scanner.ts'
import type { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import type { ByteRange, ListOptions } from '../../src/workspace/workspace-services.ts'
import { localFiles, type DirHint, type LocalFilesOptions } from './local-files.ts'
import { packOutcomes, packTree, type PackedOutcomes, type PackedTree } from './scan-packing.ts'

// A search worker: it loads only the scan and the local read path, so it is up in tens of ms.
// One pool of them serves every local workspace of the process; each request names its own.

/** The workspace a request reads: its real root and read settings. */
export interface ScanWorkerWorkspace {
  root: string
  options: LocalFilesOptions
}

/** What every request carries besides its work. */
interface RequestBase {
  id: number
  workspace: ScanWorkerWorkspace
  /** Directories the calling thread has checked, adopted for the rest of their cache time. */
  hints: DirHint[]
  /** Shared flags the pool sets to 1 to stop the request: its search's, its workspace's. */
  cancel: Int32Array[]
}

/** The work a request asks for: a batch of files, or directories, to scan, or directories to walk for a glob. */
export type ScanWork =
  | { type: 'scan'; job: FileScanJob; paths: WorkspacePath[] }
  | { type: 'tree'; job: FileScanJob; tree: TreeScanRequest }
  | { type: 'list'; tree: TreeListRequest }

/** Messages a scan worker takes. */
export type ScanWorkerRequest = RequestBase & ScanWork

/** What a scan worker answers for a batch. */
export type ScanWorkerReply =
  | { id: number; outcomes: PackedOutcomes }
  | { id: number; tree: PackedTree }
  | { id: number; list: TreeListOutcome[] }
  | { id: number; failed: string; cancelled: boolean }

/** What a scan worker starts with: a shared flag it sets to 1 once it has loaded. */
export interface ScanWorkerStart {
  ready: Int32Array
}

const port = parentPort!
const { ready } = workerData as ScanWorkerStart

/** The read side of the workspaces this worker served last, most recent last. */
const workspaces = new Map<string, ReturnType<typeof localFiles>>()
const MAX_WORKSPACES = 16
function filesOf({ root, options }: ScanWorkerWorkspace) {
  const key = `${options.syncIo ? 1 : 0}:${options.listingCache === false ? 0 : 1}:${options.chunkBytes}:${root}`
  let files = workspaces.get(key)
  if (files === undefined) {
    // The root was resolved by the workspace; one found changed is refused.
    if (realpathSync.native(root) !== root) throw new Error(`workspace root ${root} moved`)
    files = localFiles(root, options)
    if (workspaces.size >= MAX_WORKSPACES) workspaces.delete(workspaces.keys().next().value!)
  }
  workspaces.delete(key)
  workspaces.set(key, files)
  return files
}

/**
 * The workspace side a request reads through. Every read, listing and stat first looks at the
 * request's cancellation flag and aborts `controller` once it is set: the scan and the walk
 * check the signal right after, so a cancelled request stops at its next file or directory.
 */
function readerFor(
  files: ReturnType<typeof localFiles>,
  cancel: Int32Array[],
  controller: AbortController,
) {
  const check = () => {
    if (cancel.some((flag) => Atomics.load(flag, 0) === 1)) controller.abort()
  }
  return {
    byteIndex: files.byteIndex,
    read: (path: WorkspacePath, range?: ByteRange) => {
      check()
      return files.readRange(path, range)
    },
    readNow: (path: WorkspacePath, range?: ByteRange, into?: Uint8Array) => {
      check()
      return files.readNow(path, range, into)
    },
    readStream: (path: WorkspacePath, range?: ByteRange) => {
      check()
      return files.readStream(path, range)
    },
    list: async (path: WorkspacePath, options?: ListOptions) => {
      check()
      return files.listSync(path, options)
    },
    listNow: (path: WorkspacePath, options?: ListOptions) => {
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
  const controller = new AbortController()
  const work: Promise<ScanWorkerReply> = Promise.resolve().then(() => {
    const files = filesOf(message.workspace)
    files.seedDirs(message.hints)
    const reader = readerFor(files, message.cancel, controller)
    return message.type === 'scan'
      ? runFileScanJob(reader, message.job, message.paths, controller.signal).then((outcomes) => ({
          id: message.id,
          outcomes: packOutcomes(outcomes),
        }))
      : message.type === 'tree'
        ? runTreeScanJob(reader, message.job, message.tree, controller.signal).then((tree) => ({
            id: message.id,
            tree: packTree(tree),
          }))
        : runTreeListJob(reader, message.tree, controller.signal).then((list) => ({
            id: message.id,
            list,
          }))
  })
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
