/**
 * BM25 ranking for `search` in `bm25` mode: pure functions over texts the caller has already
 * read. The unit of retrieval is an 80-line chunk of a file; terms come from
 * {@link forEachTerm} (see tokenize.ts for the analyser).
 */
import { READ_MAX_LINE_CHARS, renderLine } from '../../read-lines.ts'
import {
  forEachTerm,
  queryTerms,
  type TermFilter,
  type TermScanOptions,
  type TermSink,
  type TokenizeOptions,
} from './tokenize.ts'
import { BM25_LIMITS, LONG_TERM_CHARS } from '../tuning.ts'

/**
 * BM25 parameters, Lucene's defaults. For a query of distinct terms q (stop words removed) and a
 * chunk D:
 *
 * ```text
 * idf(q)      = ln(1 + (N − df(q) + 0.5) / (df(q) + 0.5))
 * score(D, Q) = Σ_q idf(q) · tf(q, D) · (k1 + 1) / (tf(q, D) + k1 · (1 − b + b · dl / avgdl))
 * ```
 *
 * where N is the number of chunks of all the ranked files, df(q) the number of chunks containing
 * q, tf(q, D) the occurrences of q in D, dl the length of D in base terms and avgdl the mean dl
 * over the N chunks. Base terms are identifier parts, words and CJK bigrams; the overlay terms
 * (whole identifiers, `Intl.Segmenter` words) count in tf but not in dl, so dl is the same with
 * and without the segmenter and runs that cannot hold a query word need not be segmented.
 * Lucene's idf is never negative, so every chunk holding a query term scores > 0. Unlike Lucene,
 * lengths are exact, not quantised, and the (k1 + 1) factor is kept.
 */
export const BM25_PARAMS = { k1: 1.2, b: 0.75 } as const

/** A run of whole lines of a file. */
export interface Chunk {
  /** 1-based, inclusive. */
  startLine: number
  /** 1-based, inclusive. */
  endLine: number
  /** The lines as in the source, joined by their original line breaks, without the last one. */
  text: string
}

/** One ranked chunk. */
export interface Bm25Hit {
  path: string
  /** The chunk that was scored: the source anchor, 1-based inclusive. */
  startLine: number
  endLine: number
  score: number
  /**
   * The chunk's lines that contain a query term, each with up to `context` lines either side
   * (context may reach past the chunk, never past the file), overlapping or adjacent ranges
   * merged, rendered as the read tool renders lines (`%6d\t<line>`, 1-based, cut at 2000
   * characters), with a `--` line between ranges.
   */
  snippet: string
  /** First and last line shown in `snippet`, 1-based inclusive. */
  snippetStartLine: number
  snippetEndLine: number
  /** The query terms found in the chunk, in query order. */
  matchedTerms: string[]
}

/** Options of {@link rankBm25}. */
export interface Bm25Options extends TokenizeOptions {
  /** Hits returned at most. */
  topK: number
  /** Lines of context around each matching line of a snippet. */
  context: number
}

interface Span {
  startLine: number
  endLine: number
  /** Offsets of the chunk's text in the file: `[start, end)`, final line break excluded. */
  start: number
  end: number
}

/** The chunks of `text` as offsets; a final line break makes no extra line, `''` has none. */
function chunkSpans(text: string, size: number): Span[] {
  const spans: Span[] = []
  const n = text.length
  if (n === 0) return spans
  let line = 1
  let pos = text.charCodeAt(0) === 0xfeff ? 1 : 0
  if (pos === n) return spans
  while (pos < n) {
    const start = pos
    let end = n
    let k = 0
    while (k < size) {
      const nl = text.indexOf('\n', pos)
      k++
      if (nl === -1) {
        end = n
        pos = n
        break
      }
      end = nl
      pos = nl + 1
      if (pos === n) break
    }
    spans.push({ startLine: line, endLine: line + k - 1, start, end })
    line += k
  }
  return spans
}

/**
 * Split `text` into runs of `chunkLines` lines (the last run may be shorter). Line numbers are
 * 1-based and inclusive; lines end at `\n` (a `\r` before it stays in `text`); a trailing line
 * break does not start another line; an empty text has no chunks; a leading BOM is dropped.
 */
export function chunkLines(text: string, chunkLines: number = BM25_LIMITS.chunkLines): Chunk[] {
  const size = Math.max(1, Math.floor(chunkLines))
  return chunkSpans(text, size).map((s) => ({
    startLine: s.startLine,
    endLine: s.endLine,
    text: text.slice(s.start, s.end),
  }))
}

interface Scored {
  doc: number
  span: Span
  tf: Int32Array
  length: number
  score: number
}

/** Finds terms among the query terms without allocating: by length, first character, then `startsWith`. */
class QueryMatcher {
  readonly terms: string[]
  private readonly long = new Map<string, number>()
  private readonly byLength: (number[] | undefined)[] = []
  private readonly firsts = new Uint8Array(0x10000)
  private readonly lengths = new Uint8Array(LONG_TERM_CHARS)

  constructor(terms: string[]) {
    this.terms = terms
    terms.forEach((t, i) => {
      if (t.length >= LONG_TERM_CHARS) this.long.set(t, i)
      else {
        ;(this.byLength[t.length] ??= []).push(i)
        this.lengths[t.length] = 1
      }
      this.firsts[t.charCodeAt(0)] = 1
    })
  }

  /** The tokenizer's filter: terms whose length or first character no query term has are not reported. */
  get filter(): TermFilter {
    return { lengths: this.lengths, firsts: this.firsts, longFrom: LONG_TERM_CHARS }
  }

  /** Index of the term `source.slice(start, end)` among the query terms, or -1. */
  find(source: string, start: number, end: number): number {
    const len = end - start
    if (len >= LONG_TERM_CHARS) return this.long.get(source.slice(start, end)) ?? -1
    const bucket = this.byLength[len]
    if (bucket === undefined || this.firsts[source.charCodeAt(start)] === 0) return -1
    for (let k = 0; k < bucket.length; k++) {
      const t = bucket[k]!
      if (source.startsWith(this.terms[t]!, start)) return t
    }
    return -1
  }
}

/**
 * Rank the 80-line chunks of `docs` against `query` with BM25 ({@link BM25_PARAMS}). Returns at
 * most `topK` hits with a score > 0, by score descending, then path ascending (code-unit order),
 * then start line ascending, so equal inputs give equal output whatever the order of `docs`. A
 * query without searchable terms (empty, punctuation, only stop words) gives `[]`.
 */
export function rankBm25(
  docs: readonly { path: string; text: string }[],
  query: string,
  options: Bm25Options,
): Bm25Hit[] {
  const queryOptions: TokenizeOptions =
    options.segmenter === undefined ? {} : { segmenter: options.segmenter }
  const terms = queryTerms(query, queryOptions)
  const topK = Math.floor(options.topK)
  if (terms.length === 0 || !(topK > 0)) return []
  const context = Math.max(0, Math.floor(options.context) || 0)
  const matcher = new QueryMatcher(terms)
  const q = terms.length
  // Segmenter words of a document can only match query terms of 3+ CJK characters, and only in
  // runs containing one of them: other runs are not segmented.
  const words = terms.filter(isCjkWordTerm)
  const tokenizeOptions: TermScanOptions = {
    ...queryOptions,
    filter: matcher.filter,
    shouldSegment: (text, start, end) => {
      if (words.length === 0) return false
      const run = text.slice(start, end)
      return words.some((w) => run.includes(w))
    },
  }

  // One pass: chunk lengths, document frequencies and the tf of query terms in chunks that hold one.
  const df = new Int32Array(q)
  let tf = new Int32Array(q)
  let hits = 0
  const count: TermSink = (source, start, end) => {
    const t = matcher.find(source, start, end)
    if (t >= 0) {
      if (tf[t] === 0) hits++
      tf[t]!++
    }
  }
  let chunks = 0
  let totalLength = 0
  const scored: Scored[] = []
  docs.forEach((doc, d) => {
    for (const span of chunkSpans(doc.text, BM25_LIMITS.chunkLines)) {
      hits = 0
      const length = forEachTerm(doc.text.slice(span.start, span.end), count, tokenizeOptions)
      chunks++
      totalLength += length
      if (hits > 0) {
        for (let t = 0; t < q; t++) if (tf[t]! > 0) df[t]!++
        scored.push({ doc: d, span, tf, length, score: 0 })
        tf = new Int32Array(q)
      }
    }
  })
  if (scored.length === 0) return []

  const { k1, b } = BM25_PARAMS
  const avgdl = totalLength / chunks
  const idf = Array.from(df, (n) => Math.log(1 + (chunks - n + 0.5) / (n + 0.5)))
  for (const s of scored) {
    const norm = k1 * (1 - b + (b * s.length) / avgdl)
    let score = 0
    for (let t = 0; t < q; t++) {
      const f = s.tf[t]!
      if (f > 0) score += (idf[t]! * f * (k1 + 1)) / (f + norm)
    }
    s.score = score
  }
  scored.sort(
    (x, y) =>
      y.score - x.score ||
      comparePaths(docs[x.doc]!.path, docs[y.doc]!.path) ||
      x.span.startLine - y.span.startLine,
  )

  return scored
    .filter((s) => s.score > 0)
    .slice(0, topK)
    .map((s) => {
      const doc = docs[s.doc]!
      const snippet = renderSnippet(doc.text, s.span, matcher, context, tokenizeOptions)
      return {
        path: doc.path,
        startLine: s.span.startLine,
        endLine: s.span.endLine,
        score: s.score,
        snippet: snippet.text,
        snippetStartLine: snippet.startLine,
        snippetEndLine: snippet.endLine,
        matchedTerms: terms.filter((_, t) => s.tf[t]! > 0),
      }
    })
}

const CJK_TERM =
  /^[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\u30FC\uFF70\uFF9E\uFF9F]+$/u

/** A query term that only a segmenter word can match: three or more CJK characters. */
function isCjkWordTerm(term: string): boolean {
  if (!CJK_TERM.test(term)) return false
  let chars = 0
  for (const _ of term) chars++
  return chars >= 3
}

function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** Lines of `text` from `start` (a line start) to `end` (a line end), `\r` endings removed. */
function splitLines(text: string, start: number, end: number): string[] {
  if (start > end) return []
  return text
    .slice(start, end)
    .split('\n')
    .map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
}

function renderSnippet(
  text: string,
  span: Span,
  matcher: QueryMatcher,
  context: number,
  options: TermScanOptions,
): { text: string; startLine: number; endLine: number } {
  const lines = splitLines(text, span.start, span.end)
  // Up to `context` lines before the chunk...
  let beforeStart = span.start
  const firstPos = text.charCodeAt(0) === 0xfeff ? 1 : 0
  let before = 0
  while (before < context && beforeStart > firstPos) {
    // The previous line ends with the `\n` at beforeStart - 1.
    beforeStart = beforeStart >= 2 ? text.lastIndexOf('\n', beforeStart - 2) + 1 : 0
    if (beforeStart < firstPos) beforeStart = firstPos
    before++
  }
  const head = before > 0 ? splitLines(text, beforeStart, span.start - 1) : []
  // ...and after it (a final line break starts no line).
  let afterEnd = span.end
  let after = 0
  while (after < context && afterEnd + 1 < text.length) {
    const nl = text.indexOf('\n', afterEnd + 1)
    afterEnd = nl === -1 ? text.length : nl
    after++
  }
  const tail = after > 0 ? splitLines(text, span.end + 1, afterEnd) : []
  const all = [...head, ...lines, ...tail]
  const firstLine = span.startLine - head.length

  // Matching lines of the chunk, widened by `context`, merged when they overlap or touch.
  const ranges: [number, number][] = []
  let found = false
  const probe: TermSink = (source, start, end) => {
    if (!found && matcher.find(source, start, end) >= 0) found = true
  }
  lines.forEach((line, i) => {
    found = false
    forEachTerm(line, probe, options)
    if (!found) return
    const lineNo = span.startLine + i
    const from = Math.max(firstLine, lineNo - context)
    const to = Math.min(firstLine + all.length - 1, lineNo + context)
    const last = ranges[ranges.length - 1]
    if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to)
    else ranges.push([from, to])
  })

  const out: string[] = []
  for (const [from, to] of ranges) {
    if (out.length > 0) out.push('--')
    for (let n = from; n <= to; n++) {
      const line = all[n - firstLine]!
      const cut = line.length > READ_MAX_LINE_CHARS
      let shown = line
      if (cut) {
        let at = READ_MAX_LINE_CHARS
        const c = line.charCodeAt(at - 1)
        if (c >= 0xd800 && c <= 0xdbff) at--
        shown = line.slice(0, at)
      }
      // renderLine reads only `text` and `cut`.
      out.push(renderLine(n, { text: shown, cut, bytes: 0 }))
    }
  }
  const first = ranges[0] ?? [span.startLine, span.startLine]
  const last = ranges[ranges.length - 1] ?? first
  return { text: out.join('\n'), startLine: first[0], endLine: last[1] }
}
