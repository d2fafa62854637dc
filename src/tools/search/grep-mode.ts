import { IsoagentError } from '../../errors.ts'
import { toolSuccess, type ToolResult } from '../../tool-result.ts'
import type { FileScanJob, ScanRecord } from '../../workspace/file-scanner.ts'
import { WorkspacePath } from '../../workspace/workspace-path.ts'
import type { ToolContext } from '../../kernel/tool-spec.ts'
import { positionCursor, readCursor, skipsMetadata, type Position } from './paging.ts'
import { grepFits, grepPipeline, type Scanned } from './pipeline/grep-pipeline.ts'
import { continuedPipeline } from './pipeline/pipeline.ts'
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

/** `search` in grep mode: one page of the matching lines (or files, or counts), in walk order. */
export async function runGrep(args: SearchArgs, context: ToolContext): Promise<ToolResult> {
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
  await lineMatcherReady(args.query)
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
  const position = readCursor(args)
  const backend = args.sort === 'backend'
  const ctxLines = args.context ?? 0
  const counts = { binary: 0, lineTooLong: 0, vanished: 0 }
  const deadline = Date.now() + SEARCH_TIME_BUDGET_MS

  const out: string[] = []
  let records = 0
  let matchLines = 0
  let filesMatched = 0
  let scanned = 0
  let next: Omit<Position, 'n'> | undefined
  let timedOut = false
  let lastPrinted: { path: string; line: number } | undefined
  const resumeInside = position !== undefined && position.i === 1 && !backend
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
  const enter = prunerFor(args.include)
  const continued = continuedPipeline<Scanned, WalkSkips>(context, args.cursor, grepFits(request))
  // A cursor the session's carried-over pages did not give may be forged: the file it resumes
  // inside is scanned only when this search sees it.
  const inFile =
    resumeInside &&
    (continued !== undefined ||
      (await seesFile(context, start, include, enter, position.p as WorkspacePath)))
  if (resumeInside && !inFile) counts.vanished++
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
      job,
      units: !(outputMode === 'content' && backend),
      ...(pathOrderContent ? { unitMatches: limit } : {}),
      epoch: context.carryover.epoch,
    })
  pipeline.attach(context.signal)
  /** Matching files of earlier pages a fresh walk in backend order passes over. */
  let passOver = backend && continued === undefined ? (position?.n ?? 0) : 0
  /** Resuming inside a file: the rest of it comes first. */
  let inside: Promise<Scanned> | undefined = inFile
    ? scanFile(
        context.workspace,
        position.p as WorkspacePath,
        { ...request, afterLine: position.l, shownThrough: position.s },
        context.signal,
      ).then(
        (result) => ({ path: position.p as WorkspacePath, result }),
        (error: unknown) => ({ path: position.p as WorkspacePath, error }),
      )
    : undefined

  let nextCursor: string | null
  try {
    for (;;) {
      const here = inside !== undefined
      let scan = here ? await inside : pipeline.next()
      if (scan instanceof Promise) scan = await scan
      inside = undefined
      if (scan === undefined) break
      const { path } = scan
      if (outputMode !== 'summary' && Date.now() > deadline && lastPrinted !== undefined) {
        timedOut = true
        next = { p: lastPrinted.path, i: 0, l: 0, s: 0 }
        pipeline.putBack(scan)
        break
      }
      scanned += scan.files ?? 1
      if (scan.error !== undefined) {
        const error = scan.error
        if (IsoagentError.is(error, 'not_found', 'is_directory', 'permission_denied', 'io')) {
          counts.vanished++
          continue
        }
        throw error
      }
      let result = scan.result!
      if (pathOrderContent)
        result = truncateMatches(result, limit - records, here ? position!.s : 0)
      if (result.binary) {
        counts.binary++
        continue
      }
      if (result.lineTooLong) {
        counts.lineTooLong++
        continue
      }
      if (result.matches === 0 && !result.more) continue
      if (passOver > 0) {
        passOver--
        continue
      }
      if (outputMode !== 'summary' && records >= limit) {
        // One more matching file exists beyond a full page.
        next = { p: lastPrinted!.path, i: 0, l: 0, s: 0 }
        pipeline.putBack(scan)
        break
      }
      if (result.matches > 0) filesMatched++
      matchLines += result.matches
      if (outputMode === 'files_with_matches') {
        out.push(path)
        records++
      } else if (outputMode === 'count') {
        out.push(`${path}:${result.matches}`)
        records++
      } else if (outputMode === 'content') {
        appendContent(out, path, result.records, ctxLines > 0, lastPrinted)
        records += result.records.filter((r) => r.match).length
        if (result.records.length > 0)
          lastPrinted = { path, line: result.records[result.records.length - 1]!.line }
        if (result.more) {
          next = { p: path, i: 1, l: result.lastMatchLine, s: result.shownThrough }
          break
        }
        continue
      }
      lastPrinted = { path, line: 0 }
    }
    nextCursor =
      next === undefined
        ? null
        : positionCursor(args, { ...next, n: (position?.n ?? 0) + filesMatched })
  } catch (error) {
    await pipeline.close()
    throw error
  }
  const walkSkips = pipeline.countsSince()
  pipeline.endPage(context, nextCursor)

  let output: string
  if (outputMode === 'summary') {
    output = `${matchLines} matching line${matchLines === 1 ? '' : 's'} in ${filesMatched} file${filesMatched === 1 ? '' : 's'} (${scanned} searched)`
  } else {
    const lines =
      out.length === 0 ? [args.cursor === undefined ? '(no matches)' : '(no more matches)'] : out
    if (nextCursor !== null)
      lines.push(
        `... (${timedOut ? 'time budget reached' : 'more results'}; continue with cursor="${nextCursor}")`,
      )
    output = lines.join('\n')
  }
  return toolSuccess('search', output, {
    mode: 'grep',
    output_mode: outputMode,
    query: args.query,
    path: WorkspacePath.display(start),
    engine: matcher.engine,
    returned: records,
    matching_lines: matchLines,
    files_with_matches: filesMatched,
    files_scanned: scanned,
    files_skipped: skipsMetadata(walkSkips, counts),
    truncated: nextCursor !== null,
    timed_out: timedOut,
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
