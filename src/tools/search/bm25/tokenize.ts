/**
 * The BM25 analyser: text → lower-cased terms. Web-standard only (runs in Node, workerd and
 * Chromium); the one optional platform feature is `Intl.Segmenter`.
 *
 * Rules, in order:
 *
 * - **Word runs.** Letters, combining marks and digits of any script form words; `_` and `-`
 *   between two word characters join them into one identifier (`snake_case`, `kebab-case`).
 *   Everything else (spaces, punctuation, operators, `.`, `$`, `'`) separates.
 * - **Identifier parts.** An identifier splits at `_`/`-`, at a lower→upper change (`parseConfig`
 *   → parse, config), before the last capital of a capital run followed by a lower-case letter
 *   (`HTTPResponse` → http, response) and between letters and digits (`utf8` → utf, 8), so
 *   `parseHTTPResponse2` → parse, http, response, 2.
 * - **Whole identifier kept too.** An identifier of two or more parts also yields its parts joined
 *   without separators, lower-cased (`parsehttpresponse2`). `parseConfigFile`,
 *   `parse_config_file` and `parse-config-file` thus share the rare term `parseconfigfile`,
 *   which lifts exact-identifier matches above chunks that merely mention the three words, and it
 *   keeps identifiers whose parts are dropped (`i18n`, `x86`) findable.
 * - **One-letter parts dropped.** Single letters (`i`, `x`, the `s` of `don't`) are noise in
 *   code; single digits are kept (`v2` → 2, `v2`).
 * - **CJK** (Han, Hiragana, Katakana incl. `ー`, Hangul) runs never join Latin words. Each run
 *   yields its character bigrams, and a one-character run that character (as Lucene's
 *   `CJKBigramFilter`), so a query and a document match however a segmenter would cut them.
 *   Where `Intl.Segmenter` exists, a run also yields its dictionary words of three or more
 *   characters (`データベース接続` → データ, ータ, …, 接続, データベース); shorter words are
 *   bigrams already (or single characters, which are mostly particles). Long runs are segmented
 *   in 256-code-unit windows: V8's segmenter slows down more than linearly on long inputs.
 *   Without the segmenter (or with `{ segmenter: false }`) only bigrams are made. Query and
 *   documents take the same path, so they always agree.
 * - **Overlay terms.** The whole-identifier term and segmenter words re-describe text that base
 *   terms already cover; sinks are told which terms they are (BM25 leaves them out of a chunk's
 *   length, see bm25.ts).
 * - **Lower-casing** is `String.prototype.toLowerCase` (locale-independent). No stemming, no
 *   stop words here: stop words are dropped from queries only (see {@link QUERY_STOP_WORDS}).
 *
 * Speed: one pass over UTF-16 code units with a lazily filled class table (a regex runs once per
 * distinct non-ASCII code unit, never per character), one `toLowerCase` per call, and terms
 * reported as ranges of the lower-cased text so a caller that only counts allocates nothing.
 */
import { SEGMENT_WINDOW } from '../tuning.ts'

/** Options of {@link tokenize}. */
export interface TokenizeOptions {
  /**
   * Use `Intl.Segmenter` for CJK words where the platform has it (default `true`); `false`
   * forces the bigram-only fallback, as on a platform without the segmenter.
   */
  segmenter?: boolean
}

/**
 * Receives one term: `source.slice(start, end)`, lower-case already. Most terms are slices of the
 * lower-cased input, so a counting sink can test `end - start` or a character before it allocates
 * the slice. `overlay` marks the extra terms that re-describe text already covered by base terms:
 * the whole-identifier term and segmenter words. BM25 counts only base terms in a chunk's length.
 */
export type TermSink = (source: string, start: number, end: number, overlay: boolean) => void

/** Options of {@link forEachTerm}. */
export interface TermScanOptions extends TokenizeOptions {
  /**
   * Asked before the CJK run `text.slice(start, end)` is segmented; `false` skips the segmenter
   * for it (its bigrams are still reported). A ranker passes "does the run contain a query word",
   * which keeps the segmenter's cost off runs that cannot match.
   */
  shouldSegment?: (text: string, start: number, end: number) => boolean
  /**
   * Terms the sink wants: a term that cannot pass this filter may go unreported (it still counts
   * in the returned number of base terms). A ranker that looks up each term among a few query
   * terms passes their lengths and first characters, which keeps a call per term off the scan.
   */
  filter?: TermFilter
}

/**
 * Which terms a sink wants, by length and first code unit (as the sink would see them). A term
 * passes when its length is at least `longFrom`, or when both `lengths[length]` and
 * `firsts[first code unit]` are 1.
 */
export interface TermFilter {
  /** Indexed by term length, below `longFrom`. */
  lengths: Uint8Array
  /** Indexed by the first UTF-16 code unit (65,536 entries). */
  firsts: Uint8Array
  longFrom: number
}

/** Whether `source.slice(start, end)` may pass `filter` (always, without one). */
function admits(filter: TermFilter | undefined, source: string, start: number, end: number) {
  if (filter === undefined) return true
  const len = end - start
  return (
    len >= filter.longFrom ||
    (filter.lengths[len] === 1 && filter.firsts[source.charCodeAt(start)] === 1)
  )
}

/**
 * Query words dropped before ranking: Lucene's English stop set (`EnglishAnalyzer`) plus the
 * question words agents put in natural-language queries. Documents keep them (they count in
 * chunk length).
 */
const QUERY_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be but by for if in into is it no not of on or such that the their then ' +
    'there these they this to was will with how what when where which who why do does'
  ).split(' '),
)

/** Lower-cased terms of `text`, in order, duplicates kept. See the module comment for the rules. */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const out: string[] = []
  forEachTerm(
    text,
    (source, start, end, _overlay) => {
      out.push(start === 0 && end === source.length ? source : source.slice(start, end))
    },
    options,
  )
  return out
}

/**
 * Distinct query terms of `query` in first-occurrence order, stop words removed. Empty when the
 * query has no searchable term.
 */
export function queryTerms(query: string, options: TokenizeOptions = {}): string[] {
  const seen = new Set<string>()
  for (const term of tokenize(query, options)) {
    if (!QUERY_STOP_WORDS.has(term)) seen.add(term)
  }
  return [...seen]
}

/** Whether this platform has `Intl.Segmenter`. */
export function hasSegmenter(): boolean {
  return typeof Intl !== 'undefined' && 'Segmenter' in Intl
}

// Character classes.
const SEP = 0
const LOWER = 1 // lower-case or caseless letter, combining mark
const UPPER = 2 // upper- or title-case letter
const DIGIT = 3
const CJK = 4
const JOIN = 5 // `_` or `-`
const UNKNOWN = 255

const CJK_RE = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\u30FC\uFF70\uFF9E\uFF9F]/u
const UPPER_RE = /[\p{Lu}\p{Lt}]/u
const LETTER_RE = /[\p{L}\p{M}]/u
const DIGIT_RE = /\p{Nd}/u
const NUMBER_RE = /\p{N}/u

function classifyCodePoint(ch: string): number {
  if (CJK_RE.test(ch)) return CJK
  if (UPPER_RE.test(ch)) return UPPER
  if (LETTER_RE.test(ch)) return LOWER
  if (DIGIT_RE.test(ch)) return DIGIT
  if (NUMBER_RE.test(ch)) return LOWER // ², Ⅻ, ½: word characters without a digit boundary
  return SEP
}

/** Class of each BMP code unit; filled lazily for non-ASCII. Surrogates are never stored. */
const TABLE = new Uint8Array(0x10000).fill(UNKNOWN)
for (let c = 0; c < 0x80; c++) {
  TABLE[c] =
    c >= 0x61 && c <= 0x7a
      ? LOWER
      : c >= 0x41 && c <= 0x5a
        ? UPPER
        : c >= 0x30 && c <= 0x39
          ? DIGIT
          : c === 0x5f || c === 0x2d
            ? JOIN
            : SEP
}
const ASTRAL = new Map<number, number>()

/** Class of the code point at `i` (whose first code unit is `c`), and its width in code units. */
function classAt(text: string, i: number, c: number): number {
  const known = TABLE[c]!
  if (known !== UNKNOWN) return known
  if (c >= 0xd800 && c <= 0xdbff) {
    const d = text.charCodeAt(i + 1)
    if (d >= 0xdc00 && d <= 0xdfff) {
      const cp = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000
      let cls = ASTRAL.get(cp)
      if (cls === undefined) {
        cls = classifyCodePoint(String.fromCodePoint(cp))
        if (ASTRAL.size < 4096) ASTRAL.set(cp, cls)
      }
      return cls
    }
    return SEP
  }
  if (c >= 0xdc00 && c <= 0xdfff) return SEP // lone low surrogate
  const cls = classifyCodePoint(String.fromCharCode(c))
  TABLE[c] = cls
  return cls
}

function widthAt(text: string, i: number, c: number): number {
  if (c >= 0xd800 && c <= 0xdbff) {
    const d = text.charCodeAt(i + 1)
    if (d >= 0xdc00 && d <= 0xdfff) return 2
  }
  return 1
}

let cachedSegmenter: Intl.Segmenter | undefined

function wordSegmenter(): Intl.Segmenter | undefined {
  if (cachedSegmenter === undefined && hasSegmenter()) {
    // `und`: the root locale; ICU's CJK dictionary applies to every locale.
    cachedSegmenter = new Intl.Segmenter('und', { granularity: 'word' })
  }
  return cachedSegmenter
}

const JOINERS = /[_-]+/g

/**
 * Report every term of `text` to `sink`, in order (with {@link TermScanOptions.filter}, those that
 * may pass it); the allocation-free core of {@link tokenize}. Returns the number of base terms
 * (those reported with `overlay` false), counted whether reported or not.
 */
export function forEachTerm(text: string, sink: TermSink, options: TermScanOptions = {}): number {
  const n = text.length
  if (n === 0) return 0
  // Identifier terms go to `term(start, end, overlay)`, which lower-cases them; CJK terms
  // (caseless) to the sink as ranges of `text`.
  const term = identifierTerms(text, sink, options.filter)
  let base = 0
  const segmenter = options.segmenter === false ? undefined : wordSegmenter()
  const shouldSegment = options.shouldSegment

  let i = 0
  while (i < n) {
    const c0 = text.charCodeAt(i)
    let cls0 = TABLE[c0]!
    if (cls0 === SEP || cls0 === JOIN) {
      i++
      continue
    }
    if (cls0 === UNKNOWN) {
      cls0 = classAt(text, i, c0)
      if (cls0 === SEP) {
        i += widthAt(text, i, c0)
        continue
      }
    }

    if (cls0 === CJK) {
      const start = i
      let astral = false
      while (i < n) {
        const c = text.charCodeAt(i)
        let cls = TABLE[c]!
        if (cls === UNKNOWN) cls = classAt(text, i, c)
        if (cls !== CJK) break
        if (c >= 0xd800 && c <= 0xdbff) {
          astral = true
          i += 2 // classAt only returns CJK for a whole pair
        } else i++
      }
      base += emitBigrams(text, start, i, astral, sink)
      if (
        segmenter !== undefined &&
        i - start >= 3 &&
        (shouldSegment === undefined || shouldSegment(text, start, i))
      ) {
        emitSegments(segmenter, text, start, i, sink)
      }
      continue
    }

    // An identifier: word characters, possibly joined by `_`/`-`. Parts end at joiners, at a
    // lower→upper change, before the last capital of a capital run followed by a lower-case
    // letter, and between digits and letters.
    const start = i
    let partStart = i
    let parts = 1
    let joined = false
    let prev = cls0 // class of the character before i
    let prevPos = i // its position
    let prevPrev = SEP // class of the character before that, within the part
    i += widthAt(text, i, c0)
    for (;;) {
      // The common case: more characters of the same class, no boundary.
      let j = i
      while (j < n && TABLE[text.charCodeAt(j)] === prev) j++
      if (j > i) {
        prevPrev = prev
        prevPos = j - 1
        i = j
      }
      if (i >= n) break
      const c = text.charCodeAt(i)
      let cls = TABLE[c]!
      if (cls === UNKNOWN) cls = classAt(text, i, c)
      if (cls === JOIN) {
        j = i + 1
        while (j < n && TABLE[text.charCodeAt(j)] === JOIN) j++
        if (j >= n) break
        const cj = text.charCodeAt(j)
        let next = TABLE[cj]!
        if (next === UNKNOWN) next = classAt(text, j, cj)
        if (next !== LOWER && next !== UPPER && next !== DIGIT) break
        if (i - partStart > 1 || TABLE[text.charCodeAt(partStart)] === DIGIT) {
          base++
          term(partStart, i, false)
        }
        parts++
        joined = true
        partStart = j
        prevPrev = SEP
        prev = next
        prevPos = j
        i = j + widthAt(text, j, cj)
        continue
      }
      if (cls !== LOWER && cls !== UPPER && cls !== DIGIT) break
      if (cls !== prev) {
        let cut = -1
        if ((prev === DIGIT) !== (cls === DIGIT) || (prev === LOWER && cls === UPPER)) cut = i
        else if (cls === LOWER && prevPrev === UPPER && prevPos > partStart) cut = prevPos
        if (cut >= 0) {
          // One-letter parts are dropped, one-digit parts kept.
          if (cut - partStart > 1 || TABLE[text.charCodeAt(partStart)] === DIGIT) {
            base++
            term(partStart, cut, false)
          }
          parts++
          partStart = cut
        }
      }
      prevPrev = prev
      prev = cls
      prevPos = i
      i += c >= 0xd800 && c <= 0xdbff ? widthAt(text, i, c) : 1
    }
    if (i - partStart > 1 || TABLE[text.charCodeAt(partStart)] === DIGIT) {
      base++
      term(partStart, i, false)
    }
    if (parts > 1) {
      if (!joined) {
        term(start, i, true)
      } else {
        const whole = text.slice(start, i).replace(JOINERS, '').toLowerCase()
        sink(whole, 0, whole.length, true)
      }
    }
  }
  return base
}

/**
 * The reporter of identifier terms `text.slice(start, end)`, lower-cased as `text.toLowerCase()`
 * would lower-case them in place: a range of the lower-cased text, or, where lower-casing changes
 * the text's length (`İ` → `i̇`), the term lower-cased on its own. The whole text is lower-cased
 * only when a term needs it (`toLowerCase` costs several times the scan itself): with a filter,
 * an ASCII term is judged on its own characters (ASCII lower-casing needs no context) and only a
 * term that passes is lower-cased, alone; a term with other characters (whose lower case can
 * depend on its neighbours: final sigma) takes the whole-text path.
 */
function identifierTerms(
  text: string,
  sink: TermSink,
  filter: TermFilter | undefined,
): (start: number, end: number, overlay: boolean) => void {
  if (filter === undefined) {
    const lowered = text.toLowerCase()
    if (lowered.length === text.length)
      return (start, end, overlay) => sink(lowered, start, end, overlay)
  }
  let lowered: string | undefined
  const inPlace = (start: number, end: number, overlay: boolean) => {
    lowered ??= text.toLowerCase()
    if (lowered.length === text.length) {
      if (admits(filter, lowered, start, end)) sink(lowered, start, end, overlay)
    } else {
      const term = text.slice(start, end).toLowerCase()
      sink(term, 0, term.length, overlay)
    }
  }
  if (filter === undefined) return inPlace
  return (start, end, overlay) => {
    const c = text.charCodeAt(start)
    if (c >= 0x80) return inPlace(start, end, overlay)
    // The lower-cased term starts with the lower case of its first character, whatever follows.
    if (filter.firsts[c >= 0x41 && c <= 0x5a ? c + 32 : c] === 0) return
    for (let k = start + 1; k < end; k++) {
      if (text.charCodeAt(k) >= 0x80) return inPlace(start, end, overlay)
    }
    const len = end - start
    if (len < filter.longFrom && filter.lengths[len] === 0) return
    const term = text.slice(start, end).toLowerCase()
    sink(term, 0, len, overlay)
  }
}

/** Bigrams of a CJK run (a one-character run yields that character); returns how many. */
function emitBigrams(
  text: string,
  start: number,
  end: number,
  astral: boolean,
  emit: TermSink,
): number {
  if (!astral) {
    if (end - start === 1) {
      emit(text, start, end, false)
      return 1
    }
    for (let k = start; k + 1 < end; k++) emit(text, k, k + 2, false)
    return end - start - 1
  }
  const bounds: number[] = []
  for (let k = start; k < end; k += widthAt(text, k, text.charCodeAt(k))) bounds.push(k)
  bounds.push(end)
  if (bounds.length === 2) {
    emit(text, start, end, false)
    return 1
  }
  for (let k = 0; k + 2 < bounds.length; k++) emit(text, bounds[k]!, bounds[k + 2]!, false)
  return bounds.length - 2
}

/**
 * Segmenter words of three or more characters of a CJK run (shorter words add nothing to the
 * bigrams but noise and cost). Long runs are segmented in windows of {@link SEGMENT_WINDOW} code
 * units.
 */
function emitSegments(
  segmenter: Intl.Segmenter,
  text: string,
  start: number,
  end: number,
  emit: TermSink,
): void {
  for (let from = start; from < end;) {
    let to = Math.min(end, from + SEGMENT_WINDOW)
    const last = text.charCodeAt(to - 1)
    if (to < end && last >= 0xd800 && last <= 0xdbff) to--
    for (const seg of segmenter.segment(text.slice(from, to))) {
      if (seg.isWordLike === false) continue
      const s = from + seg.index
      const e = s + seg.segment.length
      let chars = 0
      for (let k = s; k < e && chars < 3; k += widthAt(text, k, text.charCodeAt(k))) chars++
      if (chars >= 3) emit(text, s, e, true)
    }
    from = to
  }
}
