import type { TreeListOutcome, TreeListRequest } from '../../../workspace/file-scanner.ts'
import type { WorkspacePath } from '../../../workspace/workspace-path.ts'
import type { WorkspaceServices } from '../../../workspace/workspace-services.ts'
import { compilePathGlob, prunerFor } from '../walk/path-filter.ts'
import { ahead, SearchPipeline, UnitGrouping } from './pipeline.ts'
import { runTreeListJob } from './scan-job.ts'
import { Walk, type WalkSkips } from '../walk/walk.ts'
import {
  GLOB_BATCH,
  UNIT_DEPTH,
  UNITS_PER_THREAD,
  WALK_HERE_FILES,
  WALK_HERE_MS,
} from '../tuning.ts'

/** What a glob pipeline counts: what its walk skipped, and the files it walked. */
export interface GlobCounters extends WalkSkips {
  files_walked: number
}

/** What a glob pipeline walks and matches. */
export interface GlobPipelineOptions {
  workspace: WorkspaceServices
  start: WorkspacePath
  /** The glob (the search's `query`). */
  query: string
  include?: string
  backendOrder: boolean
  /** Continue after this file (walk order). */
  after?: WorkspacePath
  /** {@link ToolCarryover.epoch} now. */
  epoch: number
}

/**
 * The files that match a glob, in walk order. Once the walk proves long, directories UNIT_DEPTH
 * below the start go whole to the workspace's scanner threads, which walk and match them while
 * this thread walks on; their files come out in their place.
 */
export function globPipeline(
  options: GlobPipelineOptions,
): SearchPipeline<WorkspacePath, GlobCounters> {
  const { workspace, start, query, include, backendOrder } = options
  const counters: GlobCounters = { unreadable_dirs: 0, unreadable_ignore_files: 0, files_walked: 0 }
  const stop = new AbortController()
  const matches = compilePathGlob(query, 'query', start)
  const admits = include === undefined ? undefined : compilePathGlob(include, 'include', start)
  const enter = prunerFor(query, include)
  const scanner = workspace.scanner
  /** Time this pipeline has spent walking, not counting its pauses at a yield. */
  let walkedMs = 0
  let resumed = performance.now()
  const walking = () => walkedMs + (performance.now() - resumed)
  let started = false
  /** Files walked before directories go to the threads: none when the scanner says 0 ms. */
  const hereFiles = scanner?.listAfterMs === 0 ? 0 : WALK_HERE_FILES
  const threads = () => {
    if (scanner === undefined || counters.files_walked < hereFiles / 2) return 0
    const ms = walking()
    const after = scanner.listAfterMs ?? WALK_HERE_MS
    if (!started && ms >= after / 2) {
      started = true
      scanner.start()
    }
    return ms >= after && counters.files_walked >= hereFiles ? scanner.threads : 0
  }
  const startDepth = start === '' ? 0 : start.split('/').length
  const walk = new Walk(workspace, {
    start,
    signal: stop.signal,
    skips: counters,
    backendOrder,
    ...(enter ? { enter } : {}),
    ...(options.after !== undefined ? { after: options.after } : {}),
    delegate: (dir) => threads() > 0 && dir.split('/').length - startDepth >= UNIT_DEPTH,
  })
  const walkId = crypto.randomUUID()
  const tree = (dirs: WorkspacePath[]): TreeListRequest => ({
    dirs,
    start,
    query,
    ...(include !== undefined ? { include } : {}),
    backendOrder,
    walkId,
  })

  async function* paths(): AsyncGenerator<readonly WorkspacePath[], void> {
    /** A directory handed over whole; `settle` is set while it waits in an unsent group. */
    interface Unit {
      dir: WorkspacePath
      list: Promise<TreeListOutcome>
      settle?: (outcome: Promise<TreeListOutcome>) => void
    }
    /** Matching files, and directories handed over whole, in walk order. */
    const queue: (WorkspacePath | Unit)[] = []
    let units = 0
    /** Directories to hand over together, in one request. */
    let group: Unit[] = []
    const grouping = new UnitGrouping()
    /** Files ready to come out, in walk order. */
    let ready: WorkspacePath[] = []
    /** Hand out what is ready; the walk is paused until the next batch is asked for. */
    async function* handOut(): AsyncGenerator<readonly WorkspacePath[], void> {
      if (ready.length === 0) return
      const out = ready
      ready = []
      walkedMs += performance.now() - resumed
      yield out
      resumed = performance.now()
    }
    const send = () => {
      const sent = group
      group = []
      const lists = scanner!.listTree(tree(sent.map((u) => u.dir)), stop.signal)
      const here = lists.catch((error: unknown) => {
        if (stop.signal.aborted) throw error
        // The scanner failed: the directories are walked here instead.
        return runTreeListJob(workspace, tree(sent.map((u) => u.dir)), stop.signal)
      })
      sent.forEach((unit, k) => {
        unit.settle!(here.then((all) => all[k]!))
        delete unit.settle
      })
    }
    /** The files of a handed-over directory at the head of the queue, once they are back. */
    const take = async (head: Unit): Promise<readonly WorkspacePath[]> => {
      units--
      if (head.settle !== undefined) send()
      const done = await head.list
      grouping.record(done.walked)
      counters.files_walked += done.walked
      counters.unreadable_dirs += done.skips.unreadable_dirs
      counters.unreadable_ignore_files += done.skips.unreadable_ignore_files
      return done.files
    }
    try {
      for (;;) {
        let entry = walk.step()
        if (entry instanceof Promise) {
          // What is ready comes out before the walk waits.
          yield* handOut()
          entry = await entry
        }
        if (entry === undefined) break
        if (typeof entry !== 'string') {
          let settle!: Unit['settle']
          const list = ahead(new Promise<TreeListOutcome>((resolve) => (settle = resolve)))
          const unit: Unit = { dir: entry.unit, list, settle }
          queue.push(unit)
          group.push(unit)
          units++
          if (group.length >= grouping.size) send()
        } else {
          counters.files_walked++
          if (matches(entry) && (admits === undefined || admits(entry))) queue.push(entry)
        }
        // Files come out as soon as nothing handed over is ahead of them; the walk goes on
        // while the threads have directories to do.
        while (
          queue.length > 0 &&
          (typeof queue[0] === 'string' || units >= UNITS_PER_THREAD * Math.max(1, threads()))
        ) {
          const head = queue.shift()!
          if (typeof head === 'string') ready.push(head)
          else {
            yield* handOut()
            ready = [...(await take(head))]
          }
        }
        if (ready.length >= GLOB_BATCH) yield* handOut()
      }
      for (const head of queue) {
        if (typeof head === 'string') ready.push(head)
        else {
          yield* handOut()
          ready = [...(await take(head))]
        }
      }
      yield* handOut()
    } finally {
      walk.close()
      stop.abort()
    }
  }

  return new SearchPipeline(paths(), stop, counters, options.epoch)
}
