import { IsoagentError } from '../../errors.ts'
import { decodeCursor, encodeCursor } from '../../paging/cursor.ts'
import { toolSuccess, type ToolResult } from '../../tool-result.ts'
import { WorkspacePath } from '../../workspace/workspace-path.ts'
import { READ_ONLY, type ToolContext, type ToolSpec } from '../tool.ts'
import { runBm25 } from './bm25-mode.ts'
import { compileLineMatcher } from './line-matcher.ts'
import { compilePathGlob, prunerFor } from './path-filter.ts'
import {
  scanFile,
  truncateMatches,
  type ScanRecord,
  type ScanRequest,
  type ScanResult,
} from './scan-file.ts'
import { outcomeError, runTreeScanJob } from './scan-job.ts'
import type {
  FileScanJob,
  FileScanOutcome,
  TreeScanOutcome,
  TreeScanRequest,
} from '../../workspace/file-scanner.ts'
import { walkFiles, type WalkSkips } from './walk.ts'

/** Page sizes: paged modes (grep, glob) and ranked mode (bm25). */
export const SEARCH_LIMITS = {
  paged: { default: 200, max: 1000 },
  ranked: { default: 10, max: 25 },
  maxContext: 8,
} as const
/** Files scanned concurrently ahead of the one being consumed. */
const SCAN_AHEAD = 16
/** A grep scans this many files itself before it hands any to the workspace's scanner. */
const SCAN_HERE_FIRST = 64
/** Directories this deep below the start go to the scanner whole (its threads walk them too). */
const UNIT_DEPTH = 2
/**
 * What a handed-over directory counts for in the files a grep keeps in flight: a few, so that
 * while one thread works through a large directory the others run well ahead of it.
 */
const UNIT_WEIGHT = 8
/** Files per batch handed to the scanner; each thread gets up to four batches ahead. */
const SCANNER_BATCH = 32
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
  const ok = typeof c.p === 'string' && ints && (c.i === 0 || c.i === 1)
  if (!ok) throw new IsoagentError('invalid_argument', 'invalid cursor: malformed position')
  try {
    WorkspacePath.parse(c.p as string)
  } catch {
    throw new IsoagentError('invalid_argument', 'invalid cursor: malformed position')
  }
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
  const matches = compilePathGlob(args.query, 'query', start)
  const include =
    args.include === undefined ? undefined : compilePathGlob(args.include, 'include', start)
  const limit = args.limit ?? SEARCH_LIMITS.paged.default
  const position = readCursor(args)
  const skips: WalkSkips = { unreadable_dirs: 0, unreadable_ignore_files: 0 }
  const backend = args.sort === 'backend'
  const paths: string[] = []
  let seen = 0
  let more = false
  let scanned = 0
  const enter = prunerFor(args.query, args.include)
  for await (const path of walkFiles(context.workspace, {
    start,
    signal: context.signal,
    skips,
    backendOrder: backend,
    ...(enter ? { enter } : {}),
    ...(position && !backend ? { after: position.p } : {}),
  })) {
    scanned++
    if (!matches(path) || (include !== undefined && !include(path))) continue
    if (backend && position !== undefined && seen++ < position.n) continue
    if (paths.length === limit) {
      more = true
      break
    }
    paths.push(path)
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
  const lines = paths.length === 0 ? ['(no files)'] : [...paths]
  if (nextCursor !== null) lines.push(`... (more files; continue with cursor="${nextCursor}")`)
  return toolSuccess('search', lines.join('\n'), {
    mode: 'glob',
    query: args.query,
    path: WorkspacePath.display(start),
    returned: paths.length,
    paths,
    files_scanned: scanned,
    files_skipped: skipsMetadata(skips, { binary: 0, lineTooLong: 0, vanished: 0 }),
    truncated: nextCursor !== null,
    next_cursor: nextCursor,
  })
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
    args.include === undefined ? undefined : compilePathGlob(args.include, 'include', start)
  const limit =
    outputMode === 'summary'
      ? Number.POSITIVE_INFINITY
      : (args.limit ?? SEARCH_LIMITS.paged.default)
  const position = readCursor(args)
  const backend = args.sort === 'backend'
  const ctxLines = args.context ?? 0
  const skips: WalkSkips = { unreadable_dirs: 0, unreadable_ignore_files: 0 }
  const counts = { binary: 0, lineTooLong: 0, vanished: 0 }
  const deadline = Date.now() + SEARCH_TIME_BUDGET_MS

  const out: string[] = []
  let records = 0
  let matchLines = 0
  let filesMatched = 0
  let scanned = 0
  let seen = 0
  let next: Omit<Position, 'n'> | undefined
  let timedOut = false
  let lastPrinted: { path: string; line: number } | undefined
  const resumeInside = position !== undefined && position.i === 1 && !backend

  const enter = prunerFor(args.include)
  const scanner = context.workspace.scanner
  /** Files the walk has given so far; a grep past SCAN_HERE_FIRST of them uses the scanner. */
  let walked = 0
  const scannerThreads = () => (walked > SCAN_HERE_FIRST ? (scanner?.threads ?? 0) : 0)
  const startDepth = start === '' ? 0 : start.split('/').length
  const walk = walkFiles(context.workspace, {
    start,
    signal: context.signal,
    skips,
    backendOrder: backend,
    ...(enter ? { enter } : {}),
    ...(position && !backend ? { after: position.p, inclusive: resumeInside } : {}),
    // A full scan (summary) hands directories UNIT_DEPTH below the start to the scanner's
    // threads whole, walk included; a paged scan hands over batches of files, so it never runs
    // far past its page.
    delegate: (dir) =>
      outputMode === 'summary' &&
      dir.split('/').length - startDepth >= UNIT_DEPTH &&
      scannerThreads() > 0,
  })
  // Scan up to SCAN_AHEAD files concurrently (I/O overlaps; on S3 these are parallel GETs), or
  // hand batches to the workspace's scanner threads once the walk proves long enough; the
  // results are consumed strictly in walk order.
  const ahead = new AbortController()
  const stopAhead = () => ahead.abort()
  context.signal.addEventListener('abort', stopAhead, { once: true })
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
  type Outcome = { result?: ScanResult; error?: unknown }
  const fromOutcome = (o: FileScanOutcome): Outcome => {
    const error = outcomeError(o)
    return error === undefined ? { result: (o as { result: ScanResult }).result } : { error }
  }
  const scanHere = (path: WorkspacePath, here: boolean): Promise<Outcome> =>
    scanFile(
      context.workspace,
      path,
      here ? { ...request, afterLine: position!.l, shownThrough: position!.s } : request,
      ahead.signal,
    ).then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    )
  const walkId = crypto.randomUUID()
  const tree = (dir: WorkspacePath): TreeScanRequest => ({
    dir,
    start,
    ...(args.include !== undefined ? { include: args.include } : {}),
    backendOrder: backend,
    walkId,
  })
  type Scanned = Outcome & { path: WorkspacePath; here: boolean }
  async function* scans(): AsyncGenerator<Scanned> {
    interface FileItem {
      path: WorkspacePath
      here: boolean
      outcome: Promise<Outcome>
      /** Set while the file waits in a batch not yet handed to the scanner. */
      settle?: (outcome: Promise<Outcome>) => void
    }
    /** A directory handed over whole: its files' outcomes, in walk order. */
    interface TreeItem {
      dir: WorkspacePath
      tree: Promise<TreeScanOutcome>
    }
    const queue: (FileItem | TreeItem)[] = []
    /** Files queued, a handed-over directory counting as UNIT_WEIGHT. */
    let queued = 0
    let batch: FileItem[] = []
    const dispatch = () => {
      const items = batch
      batch = []
      const outcomes = scanner!.scan(
        job,
        items.map((item) => item.path),
        ahead.signal,
      )
      items.forEach((item, k) => {
        item.settle!(
          outcomes.then(
            (all) => fromOutcome(all[k]!),
            // The scanner failed (not the file): scan it here instead.
            () => scanHere(item.path, false),
          ),
        )
        delete item.settle
      })
    }
    const take = async (): Promise<Scanned[]> => {
      const item = queue.shift()!
      if ('tree' in item) {
        queued -= UNIT_WEIGHT
        const done = await item.tree.catch(() =>
          // The scanner failed: walk and scan the directory here instead.
          runTreeScanJob(context.workspace, job, tree(item.dir), ahead.signal),
        )
        skips.unreadable_dirs += done.skips.unreadable_dirs
        skips.unreadable_ignore_files += done.skips.unreadable_ignore_files
        return done.files.map((f) => ({ path: f.path, here: false, ...fromOutcome(f.outcome) }))
      }
      queued--
      if (item.settle !== undefined) dispatch()
      return [{ path: item.path, here: item.here, ...(await item.outcome) }]
    }
    try {
      for await (const entry of walk) {
        const threads = scannerThreads()
        if (typeof entry !== 'string') {
          // A whole directory: dispatched at once, never batched.
          const handed = scanner!.scanTree(job, tree(entry.unit), ahead.signal)
          handed.catch(() => {})
          queue.push({ dir: entry.unit, tree: handed })
          queued += UNIT_WEIGHT
        } else {
          const path = entry
          if (include !== undefined && !include(path)) continue
          const here = resumeInside && path === position!.p
          // A grep that proves long starts the scanner's threads; this thread scans until
          // they are up.
          if (scanner !== undefined && ++walked === SCAN_HERE_FIRST) scanner.start()
          let item: FileItem
          if (threads > 0 && !here) {
            let settle!: (outcome: Promise<Outcome>) => void
            const outcome = new Promise<Outcome>((resolve) => (settle = resolve))
            item = { path, here, outcome, settle }
            batch.push(item)
            if (batch.length === SCANNER_BATCH) dispatch()
          } else item = { path, here, outcome: scanHere(path, here) }
          queue.push(item)
          queued++
        }
        if (queued >= (threads > 0 ? SCANNER_BATCH * 4 * threads : SCAN_AHEAD))
          for (const scan of await take()) yield scan
      }
      while (queue.length > 0) for (const scan of await take()) yield scan
    } finally {
      ahead.abort()
      context.signal.removeEventListener('abort', stopAhead)
    }
  }

  for await (const scan of scans()) {
    const { path, here } = scan
    if (outputMode !== 'summary' && Date.now() > deadline && lastPrinted !== undefined) {
      timedOut = true
      next = { p: lastPrinted.path, i: 0, l: 0, s: 0 }
      break
    }
    scanned++
    if (scan.error !== undefined) {
      const error = scan.error
      if (IsoagentError.is(error, 'not_found', 'is_directory', 'permission_denied', 'io')) {
        counts.vanished++
        continue
      }
      throw error
    }
    let result = scan.result!
    if (pathOrderContent) result = truncateMatches(result, limit - records, here ? position!.s : 0)
    if (result.binary) {
      counts.binary++
      continue
    }
    if (result.lineTooLong) {
      counts.lineTooLong++
      continue
    }
    if (result.matches === 0 && !result.more) continue
    if (backend && position !== undefined && seen++ < position.n) continue
    if (outputMode !== 'summary' && records >= limit && !(outputMode === 'content' && !backend)) {
      // One more matching file exists beyond a full page.
      next = { p: lastPrinted!.path, i: 0, l: 0, s: 0 }
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

  const nextCursor =
    next === undefined
      ? null
      : encodeCursor('search', { q: queryKey(args), ...next, n: (position?.n ?? 0) + filesMatched })
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
    files_skipped: skipsMetadata(skips, counts),
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
