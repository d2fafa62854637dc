import { IsoagentError } from '../../errors.ts'
import { toolSuccess, type ToolResult } from '../../tool-result.ts'
import type { FileScanJob, ScanRecord, ScanResult } from '../../workspace/file-scanner.ts'
import { WorkspacePath } from '../../workspace/workspace-path.ts'
import type { ToolContext } from '../../kernel/tool-spec.ts'
import { positionCursor, readCursor, skipsMetadata, type Position } from './paging.ts'
import { grepFits, grepPipeline, type Scanned } from './pipeline/grep-pipeline.ts'
import { continuedPipeline, type SearchPipeline } from './pipeline/pipeline.ts'
import { compileLineMatcher, lineMatcherReady } from './scan/line-matcher.ts'
import { scanFile, truncateMatches } from './scan/scan-file.ts'
import type { ScanRequest } from './scan/scan-request.ts'
import { SEARCH_LIMITS, type OutputMode, type SearchArgs } from './search-args.ts'
import { SEARCH_TIME_BUDGET_MS } from './tuning.ts'
import { compilePathGlob, prunerFor } from './walk/path-filter.ts'
import { walkSees, type WalkSkips } from './walk/walk.ts'

/**
 * Whether a search from `start` sees the file `path` a cursor resumes inside: below `start`,
 * admitted by `include`, neither hidden nor ignored. When it does not, the file is passed over
 * if it is gone or no file, or if an ancestor could not be read; a file that is there is
 * refused, for the cursor was forged.
 */
async function seesFile(
  context: ToolContext,
  start: WorkspacePath,
  include: { test: (path: string) => boolean } | undefined,
  enter: ((dir: WorkspacePath) => boolean) | undefined,
  path: WorkspacePath,
): Promise<boolean> {
  const skips: WalkSkips = { unreadable_dirs: 0, unreadable_ignore_files: 0 }
  const walk = {
    start,
    skips,
    ...(enter ? { enter } : {}),
    ...(context.signal ? { signal: context.signal } : {}),
  }
  if (
    (include === undefined || include.test(path)) &&
    (await walkSees(context.workspace, walk, path))
  )
    return true
  let there
  try {
    there = await context.workspace.stat(path)
  } catch {
    return false
  }
  if (there?.kind === 'file' && skips.unreadable_dirs + skips.unreadable_ignore_files === 0)
    throw new IsoagentError(
      'invalid_argument',
      'invalid cursor: it names a file this search does not see; pass metadata.next_cursor from the previous page unchanged',
    )
  return false
}

/** What a grep call settled before reading any file. */
interface GrepPlan {
  args: SearchArgs
  outputMode: OutputMode
  matcher: ReturnType<typeof compileLineMatcher>
  start: WorkspacePath
  include: { glob: string; test: (path: string) => boolean } | undefined
  enter: ((dir: WorkspacePath) => boolean) | undefined
  limit: number
  position: Position | undefined
  backend: boolean
  ctxLines: number
  /** Content in path order: a page holds at most `limit` matches, cut inside a file. */
  pathOrderContent: boolean
  request: ScanRequest
  job: FileScanJob
}

/** Where a page's files come from: the pipeline, and first the rest of a file resumed inside. */
interface GrepSource {
  pipeline: SearchPipeline<Scanned, WalkSkips>
  inside: Promise<Scanned> | undefined
  /** Matching files of earlier pages a fresh walk in backend order passes over. */
  passOver: number
  /** 1 when the file a cursor resumes inside is gone or not seen. */
  vanished: number
}

/** What one page gathered. */
interface GrepPage {
  out: string[]
  records: number
  matchLines: number
  filesMatched: number
  scanned: number
  next: Omit<Position, 'n'> | undefined
  timedOut: boolean
  lastPrinted: { path: string; line: number } | undefined
  counts: { binary: number; lineTooLong: number; vanished: number }
}

/** `search` in grep mode: one page of the matching lines (or files, or counts), in walk order. */
export async function runGrep(args: SearchArgs, context: ToolContext): Promise<ToolResult> {
  checkGrepArgs(args)
  await lineMatcherReady(args.query)
  const plan = grepPlan(args, context)
  const deadline = Date.now() + SEARCH_TIME_BUDGET_MS
  const source = await openSource(plan, context)
  let page: GrepPage
  let nextCursor: string | null
  try {
    page = await collectPage(plan, source, deadline)
    nextCursor =
      page.next === undefined
        ? null
        : positionCursor(args, { ...page.next, n: (plan.position?.n ?? 0) + page.filesMatched })
  } catch (error) {
    await source.pipeline.close()
    throw error
  }
  const walkSkips = source.pipeline.countsSince()
  source.pipeline.endPage(context, nextCursor)
  return grepResult(plan, page, nextCursor, walkSkips)
}

/** Argument rules between fields that the schema cannot state. */
function checkGrepArgs(args: SearchArgs): void {
  const outputMode: OutputMode = args.output_mode ?? 'content'
  if (outputMode !== 'content' && args.context !== undefined && args.context > 0) {
    throw new IsoagentError('invalid_argument', 'context applies to output_mode "content" only')
  }
  if (outputMode === 'summary' && (args.cursor !== undefined || args.limit !== undefined)) {
    throw new IsoagentError(
      'invalid_argument',
      'summary is a full scan: limit and cursor do not apply',
    )
  }
}

/** The matcher, the start, the filters, the page size and the scan request of a call. */
function grepPlan(args: SearchArgs, context: ToolContext): GrepPlan {
  const outputMode: OutputMode = args.output_mode ?? 'content'
  const matcher = compileLineMatcher(
    args.query,
    args.case_sensitive ?? true,
    context.workspace.byteIndex,
  )
  const start = context.path(args.path ?? '.')
  const include =
    args.include === undefined
      ? undefined
      : { glob: args.include, test: compilePathGlob(args.include, 'include', start) }
  const limit =
    outputMode === 'summary'
      ? Number.POSITIVE_INFINITY
      : (args.limit ?? SEARCH_LIMITS.paged.default)
  const backend = args.sort === 'backend'
  const ctxLines = args.context ?? 0
  const pathOrderContent = outputMode === 'content' && !backend
  const request: ScanRequest = {
    matcher,
    keepText: outputMode === 'content',
    firstOnly: outputMode === 'files_with_matches',
    context: ctxLines,
    afterLine: 0,
    shownThrough: 0,
    // A page never holds more than `limit` matches; the consumer trims to what is left.
    maxMatches: pathOrderContent ? limit : Number.POSITIVE_INFINITY,
  }
  const job: FileScanJob = {
    pattern: args.query,
    caseSensitive: args.case_sensitive ?? true,
    keepText: request.keepText,
    firstOnly: request.firstOnly,
    context: request.context,
    maxMatches: request.maxMatches,
  }
  return {
    args,
    outputMode,
    matcher,
    start,
    include,
    enter: prunerFor(args.include),
    limit,
    position: readCursor(args),
    backend,
    ctxLines,
    pathOrderContent,
    request,
    job,
  }
}

/** The pipeline a page reads from (carried over from the last page, or a fresh walk). */
async function openSource(plan: GrepPlan, context: ToolContext): Promise<GrepSource> {
  const { args, position, backend, start, include, enter, request } = plan
  const resumeInside = position !== undefined && position.i === 1 && !backend
  const continued = continuedPipeline<Scanned, WalkSkips>(context, args.cursor, grepFits(request))
  // A cursor the session's carried-over pages did not give may be forged: the file it resumes
  // inside is scanned only when this search sees it.
  const inFile =
    resumeInside &&
    (continued !== undefined ||
      (await seesFile(context, start, include, enter, position.p as WorkspacePath)))
  const pipeline =
    continued ??
    grepPipeline({
      workspace: context.workspace,
      start,
      ...(include ? { include } : {}),
      ...(enter ? { enter } : {}),
      backendOrder: backend,
      ...(position && !backend ? { after: position.p as WorkspacePath } : {}),
      request,
      job: plan.job,
      units: !(plan.outputMode === 'content' && backend),
      ...(plan.pathOrderContent ? { unitMatches: plan.limit } : {}),
      epoch: context.carryover.epoch,
    })
  pipeline.attach(context.signal)
  const path = position?.p as WorkspacePath
  return {
    pipeline,
    // Resuming inside a file: the rest of it comes first.
    inside: inFile
      ? scanFile(
          context.workspace,
          path,
          { ...request, afterLine: position!.l, shownThrough: position!.s },
          context.signal,
        ).then(
          (result) => ({ path, result }),
          (error: unknown) => ({ path, error }),
        )
      : undefined,
    passOver: backend && continued === undefined ? (position?.n ?? 0) : 0,
    vanished: resumeInside && !inFile ? 1 : 0,
  }
}

/** Read files until the page is full, the source ends or the time budget is spent. */
async function collectPage(
  plan: GrepPlan,
  source: GrepSource,
  deadline: number,
): Promise<GrepPage> {
  const page: GrepPage = {
    out: [],
    records: 0,
    matchLines: 0,
    filesMatched: 0,
    scanned: 0,
    next: undefined,
    timedOut: false,
    lastPrinted: undefined,
    counts: { binary: 0, lineTooLong: 0, vanished: source.vanished },
  }
  const { pipeline } = source
  let inside = source.inside
  let passOver = source.passOver
  for (;;) {
    const here = inside !== undefined
    let scan = here ? await inside : pipeline.next()
    if (scan instanceof Promise) scan = await scan
    inside = undefined
    if (scan === undefined) break
    if (plan.outputMode !== 'summary' && Date.now() > deadline && page.lastPrinted !== undefined) {
      page.timedOut = true
      page.next = { p: page.lastPrinted.path, i: 0, l: 0, s: 0 }
      pipeline.putBack(scan)
      break
    }
    page.scanned += scan.files ?? 1
    const result = usableResult(plan, page, scan, here)
    if (result === undefined) continue
    if (passOver > 0) {
      passOver--
      continue
    }
    if (plan.outputMode !== 'summary' && page.records >= plan.limit) {
      // One more matching file exists beyond a full page.
      page.next = { p: page.lastPrinted!.path, i: 0, l: 0, s: 0 }
      pipeline.putBack(scan)
      break
    }
    if (appendResult(plan, page, scan.path, result)) break
  }
  return page
}

/**
 * A scanned file's result when it matches (cut to what the page has room for), else undefined:
 * a file gone meanwhile, binary or with an over-long line is counted and passed over.
 */
function usableResult(
  plan: GrepPlan,
  page: GrepPage,
  scan: Scanned,
  resumed: boolean,
): ScanResult | undefined {
  if (scan.error !== undefined) {
    const error = scan.error
    if (IsoagentError.is(error, 'not_found', 'is_directory', 'permission_denied', 'io')) {
      page.counts.vanished++
      return undefined
    }
    throw error
  }
  let result = scan.result!
  if (plan.pathOrderContent)
    result = truncateMatches(result, plan.limit - page.records, resumed ? plan.position!.s : 0)
  if (result.binary) {
    page.counts.binary++
    return undefined
  }
  if (result.lineTooLong) {
    page.counts.lineTooLong++
    return undefined
  }
  if (result.matches === 0 && !result.more) return undefined
  return result
}

/** Put a matching file on the page; true when the page ends inside it (content with more). */
function appendResult(plan: GrepPlan, page: GrepPage, path: string, result: ScanResult): boolean {
  if (result.matches > 0) page.filesMatched++
  page.matchLines += result.matches
  if (plan.outputMode === 'files_with_matches') {
    page.out.push(path)
    page.records++
  } else if (plan.outputMode === 'count') {
    page.out.push(`${path}:${result.matches}`)
    page.records++
  } else if (plan.outputMode === 'content') {
    appendContent(page.out, path, result.records, plan.ctxLines > 0, page.lastPrinted)
    page.records += result.records.filter((r) => r.match).length
    if (result.records.length > 0)
      page.lastPrinted = { path, line: result.records[result.records.length - 1]!.line }
    if (result.more) {
      page.next = { p: path, i: 1, l: result.lastMatchLine, s: result.shownThrough }
      return true
    }
    return false
  }
  page.lastPrinted = { path, line: 0 }
  return false
}

/** The page as the tool's text and metadata. */
function grepResult(
  plan: GrepPlan,
  page: GrepPage,
  nextCursor: string | null,
  walkSkips: WalkSkips,
): ToolResult {
  const { args, outputMode } = plan
  let output: string
  if (outputMode === 'summary') {
    const { matchLines, filesMatched, scanned } = page
    output = `${matchLines} matching line${matchLines === 1 ? '' : 's'} in ${filesMatched} file${filesMatched === 1 ? '' : 's'} (${scanned} searched)`
  } else {
    const lines =
      page.out.length === 0
        ? [args.cursor === undefined ? '(no matches)' : '(no more matches)']
        : page.out
    if (nextCursor !== null)
      lines.push(
        `... (${page.timedOut ? 'time budget reached' : 'more results'}; continue with cursor="${nextCursor}")`,
      )
    output = lines.join('\n')
  }
  return toolSuccess('search', output, {
    mode: 'grep',
    output_mode: outputMode,
    query: args.query,
    path: WorkspacePath.display(plan.start),
    engine: plan.matcher.engine,
    returned: page.records,
    matching_lines: page.matchLines,
    files_with_matches: page.filesMatched,
    files_scanned: page.scanned,
    files_skipped: skipsMetadata(walkSkips, page.counts),
    truncated: nextCursor !== null,
    timed_out: page.timedOut,
    next_cursor: nextCursor,
  })
}

/** Append a file's records rg-style: `path:n:text` for matches, `path-n-text` for context. */
function appendContent(
  out: string[],
  path: string,
  records: ScanRecord[],
  separators: boolean,
  last: { path: string; line: number } | undefined,
) {
  let prev = last?.path === path ? last.line : undefined
  let first = true
  for (const r of records) {
    if (
      separators &&
      out.length > 0 &&
      (first ? prev === undefined || r.line !== prev + 1 : r.line !== prev! + 1)
    )
      out.push('--')
    out.push(`${path}${r.match ? ':' : '-'}${r.line}${r.match ? ':' : '-'}${r.text}`)
    prev = r.line
    first = false
  }
}
