import { IsoagentError } from '../../errors.ts'
import { decodeCursor, encodeCursor } from '../../paging/cursor.ts'
import { toolSuccess, type ToolResult } from '../../tool-result.ts'
import type { FileScanJob } from '../../workspace/file-scanner.ts'
import { WorkspacePath } from '../../workspace/workspace-path.ts'
import { READ_ONLY, type ToolContext, type ToolSpec } from '../tool.ts'
import { runBm25 } from './bm25/bm25-mode.ts'
import { globPipeline, type GlobCounters } from './pipeline/glob-pipeline.ts'
import { grepFits, grepPipeline, type Scanned } from './pipeline/grep-pipeline.ts'
import { compileLineMatcher } from './scan/line-matcher.ts'
import { compilePathGlob, prunerFor } from './walk/path-filter.ts'
import { continuedPipeline } from './pipeline/pipeline.ts'
import { scanFile, truncateMatches, type ScanRecord, type ScanRequest } from './scan/scan-file.ts'
import { walkSees, type WalkSkips } from './walk/walk.ts'

/** Page sizes: paged modes (grep, glob) and ranked mode (bm25). */
export const SEARCH_LIMITS = {
  paged: { default: 200, max: 1000 },
  ranked: { default: 10, max: 25 },
  maxContext: 8,
} as const
/**
 * A paged search that runs longer stops at a file boundary and returns what it has, with a
 * cursor; `summary` (a full scan by definition) is exempt.
 */
export const SEARCH_TIME_BUDGET_MS = 30_000

type OutputMode = 'content' | 'files_with_matches' | 'count' | 'summary'

export interface SearchArgs {
  mode: 'grep' | 'glob' | 'bm25'
  query: string
  path?: string
  include?: string
  context?: number
  case_sensitive?: boolean
  output_mode?: OutputMode
  limit?: number
  cursor?: string
  sort?: 'path' | 'backend'
}

/** FNV-1a of the query's defining arguments: a cursor only continues the query that made it. */
function queryKey(args: SearchArgs): string {
  const text = JSON.stringify([
    args.mode,
    args.query,
    args.path ?? '',
    args.include ?? '',
    args.context ?? 0,
    args.case_sensitive ?? true,
    args.output_mode ?? 'content',
    args.sort ?? 'path',
  ])
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0).toString(36)
}

interface Position {
  /** Path of the file where the previous page stopped. */
  p: string
  /** 1: resume inside file `p` (content mode); 0: resume after it. */
  i: number
  /** Content mode: last match line shown in that file. */
  l: number
  /** Content mode: last line printed in that file. */
  s: number
  /** Backend order: matching files already returned. */
  n: number
}

function readCursor(args: SearchArgs): Position | undefined {
  if (args.cursor === undefined) return undefined
  const c = decodeCursor('search', args.cursor)
  if (c.q !== queryKey(args)) {
    throw new IsoagentError(
      'invalid_argument',
      'invalid cursor: it belongs to a different query; repeat the query that returned it, unchanged',
    )
  }
  const ints = [c.i, c.l, c.s, c.n].every((v) => Number.isInteger(v) && (v as number) >= 0)
  // The position is a path the walk gave (any name a directory can hold), not one to parse.
  const ok = WorkspacePath.isNormal(c.p) && ints && (c.i === 0 || c.i === 1)
  if (!ok) throw new IsoagentError('invalid_argument', 'invalid cursor: malformed position')
  return {
    p: c.p as string,
    i: c.i as number,
    l: c.l as number,
    s: c.s as number,
    n: c.n as number,
  }
}

function skipsMetadata(
  skips: WalkSkips,
  counts: { binary: number; lineTooLong: number; vanished: number },
) {
  return {
    binary: counts.binary,
    line_too_long: counts.lineTooLong,
    vanished: counts.vanished,
    ...skips,
  }
}

export const searchTool: ToolSpec<SearchArgs> = {
  name: 'search',
  description:
    'Search the workspace. mode "grep": JavaScript regular expression (Unicode) over file lines, output_mode ' +
    'content (path:line:text) | files_with_matches | count (path:N) | summary. mode "glob": list files matching a ' +
    'glob (brace sets, extglobs, **; a pattern without / matches file names at any depth). mode "bm25": ranked ' +
    'text search, top chunks with line ranges. Walks like ripgrep: .gitignore/.ignore respected, hidden files and ' +
    'binary files skipped. Paged: pass metadata.next_cursor as cursor.',
  parameters: {
    type: 'object',
    additionalProperties: false,
    required: ['mode', 'query'],
    properties: {
      mode: { type: 'string', enum: ['grep', 'glob', 'bm25'] },
      query: {
        type: 'string',
        minLength: 1,
        maxLength: 4096,
        description: 'Regex (grep), glob (glob) or words (bm25).',
      },
      path: {
        type: 'string',
        description: 'Directory or file to search (default the workspace root).',
      },
      include: {
        type: 'string',
        minLength: 1,
        description:
          'Only files matching this glob (e.g. "*.ts", "src/**/*.{js,ts}", "!*.min.js").',
      },
      context: {
        type: 'integer',
        minimum: 0,
        maximum: SEARCH_LIMITS.maxContext,
        description: 'Lines of context around grep matches (default 0) or bm25 hits (default 2).',
      },
      case_sensitive: { type: 'boolean', description: 'grep: match case exactly (default true).' },
      output_mode: {
        type: 'string',
        enum: ['content', 'files_with_matches', 'count', 'summary'],
        description: 'grep output (default content).',
      },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: SEARCH_LIMITS.paged.max,
        description:
          'Page size: matching lines, files or paths (default 200, max 1000); bm25 hits (default 10, max 25).',
      },
      cursor: {
        type: 'string',
        minLength: 1,
        description: 'metadata.next_cursor of the previous page.',
      },
      sort: {
        type: 'string',
        enum: ['path', 'backend'],
        description: 'path (default, stable paging) or the backend listing order.',
      },
    },
  },
  available: (c) => c.read && c.search,
  scheduling: { ...READ_ONLY, max_parallelism: 4 },
  primaryArgument: 'path',
  async run(args, context) {
    if (args.mode === 'bm25') {
      if (args.cursor !== undefined)
        throw new IsoagentError(
          'invalid_argument',
          'bm25 results are ranked, not paged: cursor does not apply',
        )
      if ((args.limit ?? 0) > SEARCH_LIMITS.ranked.max)
        throw new IsoagentError(
          'invalid_argument',
          `bm25 limit is at most ${SEARCH_LIMITS.ranked.max}`,
        )
      return runBm25(args, context)
    }
    if (args.mode === 'glob') return runGlob(args, context)
    return runGrep(args, context)
  },
}

async function runGlob(args: SearchArgs, context: ToolContext): Promise<ToolResult> {
  for (const key of ['context', 'case_sensitive', 'output_mode'] as const) {
    if (args[key] !== undefined)
      throw new IsoagentError('invalid_argument', `${key} does not apply to glob mode`)
  }
  const start = context.path(args.path ?? '.')
  // Both globs compile here first, so a bad one is refused before any walk.
  compilePathGlob(args.query, 'query', start)
  if (args.include !== undefined) compilePathGlob(args.include, 'include', start)
  const limit = args.limit ?? SEARCH_LIMITS.paged.default
  const position = readCursor(args)
  const backend = args.sort === 'backend'
  const continued = continuedPipeline<WorkspacePath, GlobCounters>(context, args.cursor)
  const pipeline =
    continued ??
    globPipeline({
      workspace: context.workspace,
      start,
      query: args.query,
      ...(args.include !== undefined ? { include: args.include } : {}),
      backendOrder: backend,
      ...(position && !backend ? { after: position.p as WorkspacePath } : {}),
      epoch: context.carryover.epoch,
    })
  pipeline.attach(context.signal)
  /** Matching files of earlier pages a fresh walk in backend order passes over. */
  let passOver = backend && continued === undefined ? (position?.n ?? 0) : 0
  const paths: string[] = []
  let more = false
  try {
    for (;;) {
      let path = pipeline.next()
      if (path instanceof Promise) path = await path
      if (path === undefined) break
      if (passOver > 0) {
        passOver--
        continue
      }
      if (paths.length === limit) {
        more = true
        pipeline.putBack(path)
        break
      }
      paths.push(path)
    }
  } catch (error) {
    await pipeline.close()
    throw error
  }
  const last = paths[paths.length - 1]
  const nextCursor =
    more && last !== undefined
      ? encodeCursor('search', {
          q: queryKey(args),
          p: last,
          i: 0,
          l: 0,
          s: 0,
          n: (position?.n ?? 0) + paths.length,
        })
      : null
  const { files_walked, ...skips } = pipeline.countsSince()
  pipeline.endPage(context, nextCursor)
  const lines = paths.length === 0 ? ['(no files)'] : [...paths]
  if (nextCursor !== null) lines.push(`... (more files; continue with cursor="${nextCursor}")`)
  return toolSuccess('search', lines.join('\n'), {
    mode: 'glob',
    query: args.query,
    path: WorkspacePath.display(start),
    returned: paths.length,
    paths,
    files_scanned: files_walked,
    files_skipped: skipsMetadata(skips, { binary: 0, lineTooLong: 0, vanished: 0 }),
    truncated: nextCursor !== null,
    next_cursor: nextCursor,
  })
}

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

async function runGrep(args: SearchArgs, context: ToolContext): Promise<ToolResult> {
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
  const matcher = compileLineMatcher(args.query, args.case_sensitive ?? true)
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
        : encodeCursor('search', {
            q: queryKey(args),
            ...next,
            n: (position?.n ?? 0) + filesMatched,
          })
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
