import { IsoagentError } from '../../../errors.ts'
import {
  byteFinder,
  byteNeedle,
  hasLowerCasingSigns,
  type ByteFinder,
} from '../bytes/byte-search.ts'
import { looksBinary } from '../../../text/bytes.ts'
import { toolSuccess, type ToolResult } from '../../../tool-result.ts'
import { WorkspacePath } from '../../../workspace/workspace-path.ts'
import type { ByteIndex } from '../../../workspace/workspace-services.ts'
import type { ToolContext } from '../../../kernel/tool-spec.ts'
import { BM25_LIMITS } from '../tuning.ts'
import { BM25_PARAMS, rankBm25 } from './bm25.ts'
import { compilePathGlob, prunerFor } from '../walk/path-filter.ts'
import type { SearchArgs } from '../search-args.ts'
import { queryTerms } from './tokenize.ts'
import { walkFiles, type WalkSkips } from '../walk/walk.ts'

const decoder = new TextDecoder('utf-8')

/**
 * How a file is tested for a query term: a term `text.toLowerCase().includes(term)` would find.
 * ASCII terms and terms without cased characters are looked for in the raw bytes (ASCII case
 * folded); the rest, and files where lower-casing could make ASCII out of other characters
 * (U+212A KELVIN SIGN → `k`, U+0130 → `i̇`), take the decoded, lower-cased text.
 */
interface TermFinder {
  term: string
  find?: ByteFinder
}

function termFinder(term: string, index: ByteIndex | undefined): TermFinder {
  const uncased = [...term].every(
    (c) => c.toLowerCase() === c && c.toUpperCase() === c && c !== '\u0307',
  )
  // eslint-disable-next-line no-control-regex
  const ascii = /^[\x00-\x7f]+$/.test(term)
  const needle = ascii || uncased ? byteNeedle(term, ascii) : undefined
  return needle === undefined ? { term } : { term, find: byteFinder(needle, index) }
}

/** How many of the terms the file contains. */
function countTerms(finders: TermFinder[], bytes: Uint8Array): number {
  let text: string | undefined
  let signs: boolean | undefined
  let distinct = 0
  for (const f of finders) {
    if (f.find !== undefined) {
      signs ??= hasLowerCasingSigns(bytes)
      if (!signs) {
        if (f.find(bytes, 0) !== -1) distinct++
        continue
      }
    }
    text ??= decoder.decode(bytes).toLowerCase()
    if (text.includes(f.term)) distinct++
  }
  return distinct
}

/**
 * BM25 over the workspace: the walk narrows candidates to files containing at least one query
 * term (most distinct terms first), then at most 256 of them — each read up to 512 KiB, 16 MiB in
 * all — are split into 80-line chunks and ranked.
 */
export async function runBm25(args: SearchArgs, context: ToolContext): Promise<ToolResult> {
  if (
    args.case_sensitive !== undefined ||
    args.output_mode !== undefined ||
    args.sort !== undefined
  ) {
    throw new IsoagentError(
      'invalid_argument',
      'case_sensitive, output_mode and sort do not apply to bm25 mode',
    )
  }
  const terms = [...new Set(queryTerms(args.query))]
  if (terms.length === 0)
    throw new IsoagentError('invalid_argument', 'the bm25 query has no searchable words')
  const termFinders = terms.map((term) => termFinder(term, context.workspace.byteIndex))
  const start = context.path(args.path ?? '.')
  const include =
    args.include === undefined ? undefined : compilePathGlob(args.include, 'include', start)
  const skips: WalkSkips = { unreadable_dirs: 0, unreadable_ignore_files: 0 }
  const candidates: { path: WorkspacePath; distinct: number }[] = []
  let scanned = 0
  let binary = 0
  let oversized = 0
  const enter = prunerFor(args.include)
  for await (const path of walkFiles(context.workspace, {
    start,
    signal: context.signal,
    skips,
    ...(enter ? { enter } : {}),
  })) {
    if (include !== undefined && !include(path)) continue
    scanned++
    let bytes: Uint8Array
    try {
      bytes = await context.workspace.read(path, { offset: 0, length: BM25_LIMITS.maxFileBytes })
    } catch {
      continue
    }
    if (looksBinary(bytes)) {
      binary++
      continue
    }
    const distinct = countTerms(termFinders, bytes)
    if (distinct > 0) candidates.push({ path, distinct })
  }
  candidates.sort((a, b) => b.distinct - a.distinct)
  const docs: { path: string; text: string }[] = []
  let total = 0
  let bytesCapped = false
  for (const c of candidates.slice(0, BM25_LIMITS.maxFiles)) {
    const stat = await context.workspace.stat(c.path)
    if (stat === undefined) continue
    if (stat.size > BM25_LIMITS.maxFileBytes) oversized++
    const room = Math.min(BM25_LIMITS.maxFileBytes, BM25_LIMITS.maxTotalBytes - total)
    if (room <= 0) {
      bytesCapped = true
      break
    }
    if (stat.size > room) bytesCapped ||= room < BM25_LIMITS.maxFileBytes
    const bytes = await context.workspace.read(c.path, { offset: 0, length: room })
    total += bytes.length
    docs.push({ path: c.path, text: decoder.decode(bytes) })
  }
  const filesCapped = candidates.length > BM25_LIMITS.maxFiles
  const topK = args.limit ?? 10
  const hits = rankBm25(docs, args.query, { topK, context: args.context ?? 2 })
  const sections = hits.map(
    (h) =>
      `=== ${h.path}:${h.startLine}-${h.endLine} (score ${h.score.toFixed(3)}) ===\n${h.snippet}`,
  )
  const warnings: string[] = []
  if (filesCapped)
    warnings.push(
      `${candidates.length} files contain query terms; only the ${BM25_LIMITS.maxFiles} with the most distinct terms were ranked`,
    )
  if (bytesCapped)
    warnings.push(
      `the ${BM25_LIMITS.maxTotalBytes}-byte total cap was reached; some candidates were ranked on a prefix or not at all`,
    )
  if (oversized > 0)
    warnings.push(
      `${oversized} file(s) over ${BM25_LIMITS.maxFileBytes} bytes were ranked on their first ${BM25_LIMITS.maxFileBytes} bytes`,
    )
  const output = [
    ...(sections.length === 0 ? ['(no matches)'] : sections),
    ...warnings.map((w) => `[warning: ${w}]`),
  ].join('\n')
  return toolSuccess('search', output, {
    mode: 'bm25',
    query: args.query,
    path: WorkspacePath.display(start),
    terms,
    params: { ...BM25_PARAMS, chunk_lines: BM25_LIMITS.chunkLines },
    hits: hits.map((h) => ({
      path: h.path,
      start_line: h.startLine,
      end_line: h.endLine,
      score: h.score,
      matched_terms: h.matchedTerms,
    })),
    source_anchors: hits.map((h) => ({
      path: h.path,
      start_line: h.startLine,
      end_line: h.endLine,
    })),
    files_scanned: scanned,
    files_with_terms: candidates.length,
    files_ranked: docs.length,
    bytes_ranked: total,
    files_skipped: { binary, ...skips },
    truncated: filesCapped || bytesCapped || oversized > 0,
    warnings,
  })
}
