import { parentPort, workerData } from 'node:worker_threads'
import {
  IsoagentError,
  runFileScanJob,
  type FileScanJob,
  type WorkspacePath,
} from '../../src/index.ts'
import { openLocalWorkspace, type DirHint, type LocalWorkspaceOptions } from './local-workspace.ts'

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
  | { type: 'cancel'; id: number }

/** What a scan worker answers for a batch. */
export type ScanWorkerReply =
  | { id: number; outcomes: Awaited<ReturnType<typeof runFileScanJob>> }
  | { id: number; failed: string; cancelled: boolean }

/** The data a scan worker starts with. */
export interface ScanWorkerData {
  root: string
  options: Pick<LocalWorkspaceOptions, 'readChunkBytes' | 'syncMetadata'>
}

const port = parentPort!
const { root, options } = workerData as ScanWorkerData
const local = openLocalWorkspace(root, { ...options, git: 'isomorphic', searchThreads: 0 })
const running = new Map<number, AbortController>()

port.on('message', (message: ScanWorkerRequest) => {
  if (message.type === 'cancel') {
    running.get(message.id)?.abort()
    return
  }
  local.seedDirs(message.hints)
  const controller = new AbortController()
  running.set(message.id, controller)
  runFileScanJob(local.workspace, message.job, message.paths, controller.signal).then(
    (outcomes) => {
      running.delete(message.id)
      port.postMessage({ id: message.id, outcomes } satisfies ScanWorkerReply)
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
