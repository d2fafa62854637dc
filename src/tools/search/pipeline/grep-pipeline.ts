import type {
  FileScanJob,
  FileScanner,
  FileScanOutcome,
  ScanResult,
  TreeScanOutcome,
  TreeScanRequest,
} from '../../../workspace/file-scanner.ts'
import type { WorkspacePath } from '../../../workspace/workspace-path.ts'
import type { WorkspaceServices } from '../../../workspace/workspace-services.ts'
import { ahead, SearchPipeline, UnitGrouping } from './pipeline.ts'
import { scanFileSoon } from '../scan/scan-file.ts'
import type { ScanRequest } from '../scan/scan-request.ts'
import { outcomeError, runTreeScanJob } from './scan-job.ts'
import { Walk, type WalkSkips } from '../walk/walk.ts'
import {
  BATCHES_AHEAD,
  SCAN_AHEAD,
  SCAN_HERE_FIRST,
  SCANNER_BATCH,
  UNIT_DEPTH,
  UNIT_WEIGHT,
} from '../tuning.ts'

/** One file's scan: its result, or the error it raised. */
export interface Scanned {
  path: WorkspacePath
  result?: ScanResult
  error?: unknown
  /**
   * How many files this stands for (default 1): a run of files without matches may come as its
   * last file (see {@link TreeScanOutcome.files}).
   */
  files?: number
}

/** What a grep pipeline walks and scans. */
export interface GrepPipelineOptions {
  workspace: WorkspaceServices
  start: WorkspacePath
  /** The `include` glob, as given and compiled. */
  include?: { glob: string; test: (path: string) => boolean }
  /** Whether a directory can hold a file `include` admits. */
  enter?: (dir: WorkspacePath) => boolean
  backendOrder: boolean
  /** Continue after this file (walk order). */
  after?: WorkspacePath
  request: ScanRequest
  job: FileScanJob
  /** Hand whole directories to the scanner's threads (not for backend-order content mode). */
  units: boolean
  /**
   * Content mode: a directory handed over whole stops after the file that brings its matching
   * lines to this many, and the rest of it is handed over again when the page gets there.
   */
  unitMatches?: number
  /** {@link ToolCarryover.epoch} now. */
  epoch: number
}

type Outcome = { result?: ScanResult; error?: unknown }

const fromOutcome = (o: FileScanOutcome): Outcome => {
  const error = outcomeError(o)
  return error === undefined ? { result: (o as { result: ScanResult }).result } : { error }
}

/**
 * What a grep pipeline's work depends on beyond the query and the cursor: in content mode, the
 * lines kept per file (the page size it was made for).
 */
export function grepFits(request: ScanRequest): string {
  return request.keepText ? `lines:${request.maxMatches}` : ''
}

/** Scan a file on this thread: at once where the workspace reads at once. */
function scanHere(
  workspace: WorkspaceServices,
  path: WorkspacePath,
  request: ScanRequest,
  signal: AbortSignal,
): Outcome | Promise<Outcome> {
  let scanned: ScanResult | Promise<ScanResult>
  try {
    scanned = scanFileSoon(workspace, path, request, signal)
  } catch (error) {
    return { error }
  }
  if (!(scanned instanceof Promise)) return { result: scanned }
  return scanned.then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  )
}

/** A file in a grep's queue. */
interface FileItem {
  path: WorkspacePath
  /** The outcome, or the promise of it. */
  outcome: Outcome | Promise<Outcome>
  /** Set while the file waits in a batch not yet handed to the scanner. */
  settle?: (outcome: Outcome | Promise<Outcome>) => void
}

/**
 * A directory handed over whole: its files' outcomes, in walk order (undefined when the request
 * it went in stopped before it). `settle` is set while it waits in an unsent group.
 */
interface TreeItem {
  dir: WorkspacePath
  tree: Promise<TreeScanOutcome | undefined>
  settle?: (outcome: Promise<TreeScanOutcome | undefined>) => void
}

/** How a {@link GrepQueue} scans: here, in batches on the scanner, or whole directories there. */
interface GrepScanning {
  scanner: FileScanner | undefined
  job: FileScanJob
  stop: AbortController
  skips: WalkSkips
  /** Scan a file on this thread. */
  here(path: WorkspacePath): Outcome | Promise<Outcome>
  /** Scan directories on the scanner's threads (the rest of the first after `after`). */
  trees(dirs: WorkspacePath[], after?: WorkspacePath): Promise<TreeScanOutcome[]>
}

/**
 * The files and handed-over directories of a grep in walk order, each scanning ahead of the
 * one being consumed: files here or in batches on the scanner's threads, directories in groups.
 */
class GrepQueue {
  private readonly queue: (FileItem | TreeItem)[] = []
  /** Files queued, a handed-over directory counting as UNIT_WEIGHT. */
  queued = 0
  private batch: FileItem[] = []
  /** Directories to hand over together, in one request. */
  private group: TreeItem[] = []
  private readonly grouping = new UnitGrouping()

  constructor(private readonly scanning: GrepScanning) {}

  get length(): number {
    return this.queue.length
  }

  /** Queue a file: scanned here now, or (`threads` > 0) in the next batch for the scanner. */
  addFile(path: WorkspacePath, threads: number): void {
    let item: FileItem
    if (threads > 0) {
      let settle!: FileItem['settle']
      const outcome = new Promise<Outcome>((resolve) => (settle = resolve))
      item = { path, outcome, settle }
      this.batch.push(item)
      if (this.batch.length === SCANNER_BATCH) this.dispatch()
    } else item = { path, outcome: this.scanning.here(path) }
    this.queue.push(item)
    this.queued++
  }

  /** Queue a directory handed over whole, in the group sent next. */
  addTree(dir: WorkspacePath): void {
    let settle!: TreeItem['settle']
    const tree = ahead(new Promise<TreeScanOutcome | undefined>((resolve) => (settle = resolve)))
    const item: TreeItem = { dir, tree, settle }
    this.queue.push(item)
    this.group.push(item)
    this.queued += UNIT_WEIGHT
    if (this.group.length >= this.grouping.size) this.send()
  }

  /** The results of the item at the head of the queue, once ready. */
  async take(): Promise<Scanned[]> {
    const item = this.queue.shift()!
    if ('tree' in item) return this.takeTree(item)
    this.queued--
    if (item.settle !== undefined) this.dispatch()
    const outcome = item.outcome instanceof Promise ? await item.outcome : item.outcome
    return [{ path: item.path, ...outcome }]
  }

  private async takeTree(item: TreeItem): Promise<Scanned[]> {
    const { skips } = this.scanning
    this.queued -= UNIT_WEIGHT
    if (item.settle !== undefined) this.send()
    const done = await item.tree
    if (done === undefined || done.resumeAfter !== undefined) {
      // Its request stopped at the match cap before or inside it: the rest comes next.
      this.queue.unshift(this.handOverRest(item.dir, done?.resumeAfter))
      this.queued += UNIT_WEIGHT
    }
    if (done === undefined) return []
    this.grouping.record(done.files.reduce((n, f) => n + (f.files ?? 1), 0))
    skips.unreadable_dirs += done.skips.unreadable_dirs
    skips.unreadable_ignore_files += done.skips.unreadable_ignore_files
    return done.files.map((f) => ({
      path: f.path,
      ...fromOutcome(f.outcome),
      ...(f.files !== undefined ? { files: f.files } : {}),
    }))
  }

  /** Hand the group of directories over, in one request. */
  private send(): void {
    const sent = this.group
    this.group = []
    const trees = this.scanning.trees(sent.map((item) => item.dir))
    sent.forEach((item, k) => {
      item.settle!(trees.then((all) => all[k]))
      delete item.settle
    })
  }

  /** The rest of a directory (all of it, or what follows `after`), handed over at once. */
  private handOverRest(dir: WorkspacePath, after?: WorkspacePath): TreeItem {
    return { dir, tree: ahead(this.scanning.trees([dir], after).then((all) => all[0])) }
  }

  /** Hand the batch of files to the scanner; should it fail, they are scanned here. */
  private dispatch(): void {
    const { scanner, job, stop } = this.scanning
    const items = this.batch
    this.batch = []
    const outcomes = scanner!.scan(
      job,
      items.map((item) => item.path),
      stop.signal,
    )
    items.forEach((item, k) => {
      item.settle!(
        outcomes.then(
          (all) => fromOutcome(all[k]!),
          // The scanner failed (not the file): scan it here instead, unless the search stopped.
          (error: unknown) => (stop.signal.aborted ? { error } : this.scanning.here(item.path)),
        ),
      )
      delete item.settle
    })
  }
}

/**
 * Walk and scan for a grep, results in walk order. Files are scanned up to SCAN_AHEAD at once
 * (I/O overlaps; on S3 these are parallel GETs), or, once the walk proves long, handed in batches
 * to the workspace's scanner threads, with whole directories UNIT_DEPTH below the start handed
 * over too (the threads walk them).
 */
export function grepPipeline(options: GrepPipelineOptions): SearchPipeline<Scanned, WalkSkips> {
  const { workspace, start, include, backendOrder, request, job, unitMatches } = options
  const skips: WalkSkips = { unreadable_dirs: 0, unreadable_ignore_files: 0 }
  const stop = new AbortController()
  const scanner = workspace.scanner
  /** Files the walk has given so far; a grep past SCAN_HERE_FIRST of them uses the scanner. */
  let walked = 0
  const scannerThreads = () => (walked > SCAN_HERE_FIRST ? (scanner?.threads ?? 0) : 0)
  const startDepth = start === '' ? 0 : start.split('/').length
  const walk = new Walk(workspace, {
    start,
    signal: stop.signal,
    skips,
    backendOrder,
    ...(options.enter ? { enter: options.enter } : {}),
    ...(options.after !== undefined ? { after: options.after } : {}),
    delegate: (dir) =>
      options.units && dir.split('/').length - startDepth >= UNIT_DEPTH && scannerThreads() > 0,
  })
  const walkId = crypto.randomUUID()
  const tree = (dirs: WorkspacePath[], after?: WorkspacePath): TreeScanRequest => ({
    dirs,
    start,
    ...(include !== undefined ? { include: include.glob } : {}),
    backendOrder,
    walkId,
    ...(after !== undefined ? { after } : {}),
    ...(unitMatches !== undefined ? { stopAfterMatches: unitMatches } : {}),
  })
  const queue = new GrepQueue({
    scanner,
    job,
    stop,
    skips,
    here: (path) => scanHere(workspace, path, request, stop.signal),
    // On the scanner's threads; here, should the scanner fail.
    trees: (dirs, after) =>
      scanner!.scanTree(job, tree(dirs, after), stop.signal).catch((error: unknown) => {
        if (stop.signal.aborted) throw error
        return runTreeScanJob(workspace, job, tree(dirs, after), stop.signal)
      }),
  })

  async function* scans(): AsyncGenerator<readonly Scanned[], void> {
    try {
      for (;;) {
        let entry = walk.step()
        if (entry instanceof Promise) entry = await entry
        if (entry === undefined) break
        const threads = scannerThreads()
        if (typeof entry !== 'string') queue.addTree(entry.unit)
        else {
          if (include !== undefined && !include.test(entry)) continue
          // A grep that proves long starts the scanner's threads; this thread scans until
          // they are up.
          if (scanner !== undefined && ++walked === SCAN_HERE_FIRST) scanner.start()
          queue.addFile(entry, threads)
        }
        if (queue.queued >= (threads > 0 ? SCANNER_BATCH * BATCHES_AHEAD * threads : SCAN_AHEAD))
          yield await queue.take()
      }
      while (queue.length > 0) yield await queue.take()
    } finally {
      walk.close()
      stop.abort()
    }
  }

  return new SearchPipeline(scans(), stop, skips, options.epoch, grepFits(options.request))
}
