import type { TreeListOutcome, TreeListRequest } from '../../workspace/file-scanner.ts'
import type { WorkspacePath } from '../../workspace/workspace-path.ts'
import type { WorkspaceServices } from '../../workspace/workspace-services.ts'
import { UNIT_DEPTH } from './grep-pipeline.ts'
import { compilePathGlob, prunerFor } from './path-filter.ts'
import { SearchPipeline } from './pipeline.ts'
import { runTreeListJob } from './scan-job.ts'
import { walkFiles, type WalkSkips } from './walk.ts'

/** A glob walks this many files itself before it starts the workspace's scanner threads. */
const WALK_HERE_FIRST = 64
/** Directories handed over and not yet consumed, per scanner thread, at most. */
const UNITS_PER_THREAD = 8
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
  const threads = () => (counters.files_walked > WALK_HERE_FIRST ? (scanner?.threads ?? 0) : 0)
  const startDepth = start === '' ? 0 : start.split('/').length
  const walk = walkFiles(workspace, {
    start,
    signal: stop.signal,
    skips: counters,
    backendOrder,
    ...(enter ? { enter } : {}),
    ...(options.after !== undefined ? { after: options.after } : {}),
    delegate: (dir) => dir.split('/').length - startDepth >= UNIT_DEPTH && threads() > 0,
  })
  const walkId = crypto.randomUUID()
  const tree = (dir: WorkspacePath): TreeListRequest => ({
    dir,
    start,
    query,
    ...(include !== undefined ? { include } : {}),
    backendOrder,
    walkId,
  })

  async function* paths(): AsyncGenerator<WorkspacePath, void> {
    /** Matching files, and directories handed over whole, in walk order. */
    const queue: (WorkspacePath | { list: Promise<TreeListOutcome>; dir: WorkspacePath })[] = []
    let units = 0
    /** The files of the head of the queue, once ready to come out. */
    const take = async (): Promise<readonly WorkspacePath[]> => {
      const head = queue.shift()!
      if (typeof head === 'string') return [head]
      units--
      const done = await head.list.catch(() =>
        // The scanner failed: walk the directory here instead.
        runTreeListJob(workspace, tree(head.dir), stop.signal),
      )
      counters.files_walked += done.walked
      counters.unreadable_dirs += done.skips.unreadable_dirs
      counters.unreadable_ignore_files += done.skips.unreadable_ignore_files
      return done.files
    }
    try {
      for await (const entry of walk) {
        if (typeof entry !== 'string') {
          const list = scanner!.listTree(tree(entry.unit), stop.signal)
          list.catch(() => {})
          queue.push({ list, dir: entry.unit })
          units++
        } else {
          if (++counters.files_walked === WALK_HERE_FIRST) scanner?.start()
          if (matches(entry) && (admits === undefined || admits(entry))) queue.push(entry)
        }
        // Files come out as soon as nothing handed over is ahead of them; the walk goes on
        // while the threads have directories to do.
        while (
          queue.length > 0 &&
          (typeof queue[0] === 'string' || units >= UNITS_PER_THREAD * Math.max(1, threads()))
        )
          for (const path of await take()) yield path
      }
      while (queue.length > 0) for (const path of await take()) yield path
    } finally {
      stop.abort()
    }
  }

  return new SearchPipeline(paths(), stop, counters, options.epoch)
}
