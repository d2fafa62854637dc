import { realpathSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { IsoagentError } from '../../src/errors.ts'
import { runFileScanJob, runTreeScanJob } from '../../src/tools/search/scan-job.ts'
import type {
  FileScanJob,
  TreeScanOutcome,
  TreeScanRequest,
} from '../../src/workspace/file-scanner.ts'
import type { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import type { ListOptions } from '../../src/workspace/workspace-services.ts'
import { localFiles, type DirHint } from './local-files.ts'

// A search worker: it loads only the scan and the local read path, so it is up in tens of ms.

/** Directories the calling thread has checked, adopted for the rest of their cache time. */
export type ScanWorkerRequestHints = DirHint[]

/** Messages a scan worker takes: a batch to scan, or the cancellation of one. */
export type ScanWorkerRequest =
  | {
      type: 'scan'
      id: number
      job: FileScanJob
      paths: WorkspacePath[]
      hints: ScanWorkerRequestHints
    }
  | {
      type: 'tree'
      id: number
      job: FileScanJob
      tree: TreeScanRequest
      hints: ScanWorkerRequestHints
    }
  | { type: 'cancel'; id: number }

/** What a scan worker answers for a batch. */
export type ScanWorkerReply =
  | { id: number; outcomes: Awaited<ReturnType<typeof runFileScanJob>> }
  | { id: number; tree: TreeScanOutcome }
  | { id: number; failed: string; cancelled: boolean }

/** The data a scan worker starts with: the workspace's real root and its read settings. */
export interface ScanWorkerData {
  root: string
  options: { syncIo: boolean; chunkBytes: number }
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
const reader = {
  read: files.readRange,
  readStream: files.readStream,
  list: async (path: WorkspacePath, options?: ListOptions) => files.listSync(path, options),
  stat: (path: WorkspacePath) => files.statReal(files.resolveFast(path), path),
}
const running = new Map<number, AbortController>()

port.on('message', (message: ScanWorkerRequest) => {
  if (message.type === 'cancel') {
    running.get(message.id)?.abort()
    return
  }
  files.seedDirs(message.hints)
  const controller = new AbortController()
  running.set(message.id, controller)
  const work: Promise<ScanWorkerReply> =
    message.type === 'scan'
      ? runFileScanJob(reader, message.job, message.paths, controller.signal).then((outcomes) => ({
          id: message.id,
          outcomes,
        }))
      : runTreeScanJob(reader, message.job, message.tree, controller.signal).then((tree) => ({
          id: message.id,
          tree,
        }))
  work.then(
    (reply) => {
      running.delete(message.id)
      port.postMessage(reply)
    },
    (error: unknown) => {
      running.delete(message.id)
      port.postMessage({
        id: message.id,
        failed: error instanceof Error ? error.message : String(error),
        cancelled: IsoagentError.is(error, 'cancelled'),
      } satisfies ScanWorkerReply)
    },
  )
})
Atomics.store(ready, 0, 1)
