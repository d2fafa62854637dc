import { IsoagentError } from '../../../errors.ts'
import type {
  FileScanJob,
  FileScanOutcome,
  ScanResult,
  TreeListOutcome,
  TreeListRequest,
  TreeScanOutcome,
  TreeScanRequest,
} from '../../../workspace/file-scanner.ts'
import type { WorkspacePath } from '../../../workspace/workspace-path.ts'
import type { ByteIndex } from '../../../workspace/workspace-services.ts'
import { compileLineMatcher, lineMatcherReady, type LineMatcher } from '../scan/line-matcher.ts'
import { compilePathGlob, prunerFor } from '../walk/path-filter.ts'
import { scanFileSoon } from '../scan/scan-file.ts'
import type { FileReader, ScanRequest } from '../scan/scan-request.ts'
import { Walk, type SharedLevels, type WalkSkips, type WalkSource } from '../walk/walk.ts'
import { UNIT_BATCH } from '../tuning.ts'

let compiled: { key: string; byteIndex: ByteIndex | undefined; matcher: LineMatcher } | undefined

/**
 * Scan `paths` of `ws` for `job`, one outcome per path: the work a {@link FileScanner} runs on
 * each of its threads. It is the search tool's own scan, so the outcomes equal the tool's.
 */
export async function runFileScanJob(
  ws: FileReader,
  job: FileScanJob,
  paths: readonly WorkspacePath[],
  signal?: AbortSignal,
): Promise<FileScanOutcome[]> {
  await lineMatcherReady(job.pattern)
  const request = scanRequestOf(job, ws.byteIndex)
  const outcomes: FileScanOutcome[] = []
  for (const path of paths) {
    const outcome = scanOne(ws, request, path, signal)
    outcomes.push(outcome instanceof Promise ? await outcome : outcome)
  }
  return outcomes
}

/**
 * The scan request of `job` over files whose byte values `byteIndex` finds (its pattern compiled
 * once for consecutive jobs alike).
 */
function scanRequestOf(job: FileScanJob, byteIndex: ByteIndex | undefined): ScanRequest {
  const key = `${job.caseSensitive ? 's' : 'i'}${job.pattern}`
  if (compiled?.key !== key || compiled.byteIndex !== byteIndex)
    compiled = {
      key,
      byteIndex,
      matcher: compileLineMatcher(job.pattern, job.caseSensitive, byteIndex),
    }
  return {
    matcher: compiled.matcher,
    keepText: job.keepText,
    firstOnly: job.firstOnly,
    context: job.context,
    afterLine: 0,
    shownThrough: 0,
    maxMatches: job.maxMatches,
  }
}

/** One file's outcome: at once when its first read holds all of it, else once read. */
function scanOne(
  ws: FileReader,
  request: ScanRequest,
  path: WorkspacePath,
  signal: AbortSignal | undefined,
): FileScanOutcome | Promise<FileScanOutcome> {
  if (signal?.aborted) throw new IsoagentError('cancelled', 'search cancelled')
  let scanned: ScanResult | Promise<ScanResult>
  try {
    scanned = scanFileSoon(ws, path, request, signal)
  } catch (error) {
    return failed(error, path)
  }
  if (!(scanned instanceof Promise)) return { result: scanned }
  return scanned.then(
    (result) => ({ result }),
    (error: unknown) => failed(error, path),
  )
}

/** The outcome of a scan that raised `error` (a cancellation is raised again). */
function failed(error: unknown, path: WorkspacePath): FileScanOutcome {
  if (IsoagentError.is(error, 'cancelled')) throw error
  const e = IsoagentError.is(error)
    ? error
    : new IsoagentError('internal', `scan of ${path} failed: ${String(error)}`)
  return { error: { code: e.code, message: e.message, data: e.data } }
}

/** The error a {@link FileScanOutcome} carries, as an `IsoagentError` again. */
export function outcomeError(outcome: FileScanOutcome): IsoagentError | undefined {
  if (!('error' in outcome)) return undefined
  return new IsoagentError(outcome.error.code, outcome.error.message, { data: outcome.error.data })
}

/** Ignore levels above the directories of one search (its `walkId`), kept for its next trees. */
let levels: { walkId: string; cache: SharedLevels } | undefined

/** The ignore levels cache shared by the directories of the search `walkId`. */
function levelsOf(walkId: string) {
  if (levels?.walkId !== walkId) levels = { walkId, cache: new Map() }
  return levels.cache
}

/** How a tree job walks each of its directories. */
interface UnitWalk {
  backendOrder: boolean
  unitOf: SharedLevels
  enter: ((dir: WorkspacePath) => boolean) | undefined
  signal: AbortSignal | undefined
  after?: WorkspacePath | undefined
}

/**
 * The files of one handed-over directory, in walk order. The search's walk saw a directory
 * there; one that is gone or replaced cannot be listed, and counts as such in `skips`.
 */
async function* unitFiles(
  ws: WalkSource,
  dir: WorkspacePath,
  walk: UnitWalk,
  skips: WalkSkips,
): AsyncGenerator<readonly WorkspacePath[]> {
  const steps = new Walk(ws, {
    start: dir,
    skips,
    backendOrder: walk.backendOrder,
    unitOf: walk.unitOf,
    ...(walk.signal ? { signal: walk.signal } : {}),
    ...(walk.enter ? { enter: walk.enter } : {}),
    ...(walk.after !== undefined ? { after: walk.after } : {}),
  })
  // In batches: what the walk gives at once comes out together.
  let batch: WorkspacePath[] = []
  try {
    for (;;) {
      let path = steps.step()
      if (path instanceof Promise) {
        if (batch.length > 0) yield batch
        batch = []
        path = await path
      }
      if (path === undefined) break
      batch.push(path as WorkspacePath)
      if (batch.length >= UNIT_BATCH) {
        yield batch
        batch = []
      }
    }
    if (batch.length > 0) yield batch
  } finally {
    steps.close()
  }
}

/**
 * Walk each of `tree.dirs` and scan its files for `job`: the search tool's own walk (ignore rules
 * of the directories above included, `include` applied) and scan, for a
 * {@link FileScanner.scanTree}. One outcome per directory, up to the one where
 * `stopAfterMatches` was reached.
 */
export async function runTreeScanJob(
  ws: WalkSource & FileReader,
  job: FileScanJob,
  tree: TreeScanRequest,
  signal?: AbortSignal,
): Promise<TreeScanOutcome[]> {
  const unitOf = levelsOf(tree.walkId)
  const include =
    tree.include === undefined ? undefined : compilePathGlob(tree.include, 'include', tree.start)
  const enter = prunerFor(tree.include)
  await lineMatcherReady(job.pattern)
  const request = scanRequestOf(job, ws.byteIndex)
  const outcomes: TreeScanOutcome[] = []
  let matches = 0
  for (const [k, dir] of tree.dirs.entries()) {
    const skips = { unreadable_dirs: 0, unreadable_ignore_files: 0 }
    const files: TreeScanOutcome['files'] = []
    outcomes.push({ files, skips })
    const walk = { backendOrder: tree.backendOrder, unitOf, enter, signal }
    const after = k === 0 ? tree.after : undefined
    for await (const batch of unitFiles(ws, dir, { ...walk, after }, skips))
      for (const path of batch) {
        if (include !== undefined && !include(path)) continue
        let outcome = scanOne(ws, request, path, signal)
        if (outcome instanceof Promise) outcome = await outcome
        files.push({ path, outcome })
        if (tree.stopAfterMatches === undefined || !('result' in outcome)) continue
        matches += outcome.result.matches
        if (matches >= tree.stopAfterMatches) {
          outcomes[k]!.resumeAfter = path
          return outcomes
        }
      }
  }
  return outcomes
}

/**
 * Walk each of `tree.dirs` and keep the files that match the glob: the search tool's own walk
 * and glob matching, for a {@link FileScanner.listTree}.
 */
export async function runTreeListJob(
  ws: WalkSource,
  tree: TreeListRequest,
  signal?: AbortSignal,
): Promise<TreeListOutcome[]> {
  const unitOf = levelsOf(tree.walkId)
  const matches = compilePathGlob(tree.query, 'query', tree.start)
  const include =
    tree.include === undefined ? undefined : compilePathGlob(tree.include, 'include', tree.start)
  const enter = prunerFor(tree.query, tree.include)
  const outcomes: TreeListOutcome[] = []
  const walk = { backendOrder: tree.backendOrder, unitOf, enter, signal }
  for (const dir of tree.dirs) {
    const skips = { unreadable_dirs: 0, unreadable_ignore_files: 0 }
    const files: WorkspacePath[] = []
    let walked = 0
    for await (const batch of unitFiles(ws, dir, walk, skips))
      for (const path of batch) {
        walked++
        if (matches(path) && (include === undefined || include(path))) files.push(path)
      }
    outcomes.push({ files, walked, skips })
  }
  return outcomes
}
