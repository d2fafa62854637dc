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
 *   yields its character bigrams (a one-character run yields that character), so a query and a
 *   document match whatever the segmentation. Where `Intl.Segmenter` exists it also yields the
 *   dictionary words of the run of one character or of three or more (two-character words are
 *   already bigrams and would be counted twice): `データベース接続` → データ, ータ, …, 接続,
 *   データベース. Without the segmenter (or with `{ segmenter: false }`) only bigrams are made.
 *   Both query and documents go through the same path, so they always agree.
 * - **Lower-casing** is `String.prototype.toLowerCase` (locale-independent). No stemming, no
 *   stop words here: stop words are dropped from queries only (see {@link QUERY_STOP_WORDS}).
 *
 * Speed: one pass over UTF-16 code units with a lazily filled class table (a regex runs once per
 * distinct non-ASCII code unit, never per character), one `toLowerCase` per call, and terms
 * reported as slices of the lower-cased text so a caller that only counts can skip allocation.
 */

/** Options of {@link tokenize}. */
export interface TokenizeOptions {
  /**
   * Use `Intl.Segmenter` for CJK words where the platform has it (default `true`); `false`
   * forces the bigram-only fallback, as on a platform without the segmenter.
   */
  segmenter?: boolean
}

/**
 * Receives one term: `source.slice(start, end)`. Terms are lower-case already. Most terms are
 * slices of the lower-cased input; a counting sink can test `end - start` or a character before
 * it allocates the slice.
 */
export type TermSink = (source: string, start: number, end: number) => void

/**
 * Query words dropped before ranking: Lucene's English stop set (`EnglishAnalyzer`) plus the
 * question words agents put in natural-language queries. Documents keep them (they count in
 * chunk length).
 */
export const QUERY_STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
  'how',
  'what',
  'when',
  'where',
  'which',
  'who',
  'why',
  'do',
  'does',
])

/** Lower-cased terms of `text`, in order, duplicates kept. See the module comment for the rules. */
export function tokenize(text: string, options: TokenizeOptions = {}): string[] {
  const out: string[] = []
  forEachTerm(
    text,
    (source, start, end) => {
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
 * Report every term of `text` to `sink`, in order; the allocation-free core of {@link tokenize}.
 */
export function forEachTerm(text: string, sink: TermSink, options: TokenizeOptions = {}): void {
  const n = text.length
  if (n === 0) return
  const lowered = text.toLowerCase()
  // Lower-casing may change lengths (`İ` → `i̇`); then slice and lower-case each term instead.
  const aligned = lowered.length === n
  const segmenter = options.segmenter === false ? undefined : wordSegmenter()

  const emit = (start: number, end: number): void => {
    if (aligned) sink(lowered, start, end)
    else {
      const term = text.slice(start, end).toLowerCase()
      sink(term, 0, term.length)
    }
  }

  let i = 0
  while (i < n) {
    const c0 = text.charCodeAt(i)
    const cls0 = classAt(text, i, c0)
    if (cls0 === SEP || cls0 === JOIN) {
      i += widthAt(text, i, c0)
      continue
    }

    if (cls0 === CJK) {
      const start = i
      let astral = false
      while (i < n) {
        const c = text.charCodeAt(i)
        if (classAt(text, i, c) !== CJK) break
        const w = widthAt(text, i, c)
        if (w === 2) astral = true
        i += w
      }
      emitCjk(text, start, i, astral, segmenter, emit)
      continue
    }

    // An identifier: word characters, possibly joined by `_`/`-`.
    const start = i
    let partStart = i
    let parts = 0
    let joined = false
    let prev = cls0
    let prevPos = i
    let prevPrev = SEP
    i += widthAt(text, i, c0)
    while (i < n) {
      const c = text.charCodeAt(i)
      const cls = classAt(text, i, c)
      if (cls === JOIN) {
        let j = i + 1
        while (j < n && TABLE[text.charCodeAt(j)] === JOIN) j++
        if (j >= n) break
        const cj = text.charCodeAt(j)
        const next = classAt(text, j, cj)
        if (next !== LOWER && next !== UPPER && next !== DIGIT) break
        emitPart(text, partStart, i, emit)
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
      if ((prev === DIGIT) !== (cls === DIGIT) || (prev === LOWER && cls === UPPER)) {
        emitPart(text, partStart, i, emit)
        parts++
        partStart = i
      } else if (cls === LOWER && prev === UPPER && prevPrev === UPPER && prevPos > partStart) {
        // `HTTPResponse`: the last capital starts the next part.
        emitPart(text, partStart, prevPos, emit)
        parts++
        partStart = prevPos
      }
      prevPrev = prev
      prev = cls
      prevPos = i
      i += widthAt(text, i, c)
    }
    emitPart(text, partStart, i, emit)
    if (parts > 0) {
      if (!joined) emit(start, i)
      else {
        const whole = text.slice(start, i).replace(JOINERS, '').toLowerCase()
        sink(whole, 0, whole.length)
      }
    }
  }
}

/** One identifier part: one-letter parts are dropped, one-digit parts kept. */
function emitPart(
  text: string,
  start: number,
  end: number,
  emit: (start: number, end: number) => void,
): void {
  const len = end - start
  if (len > 1 || TABLE[text.charCodeAt(start)] === DIGIT) emit(start, end)
}

function emitCjk(
  text: string,
  start: number,
  end: number,
  astral: boolean,
  segmenter: Intl.Segmenter | undefined,
  emit: (start: number, end: number) => void,
): void {
  if (!astral) {
    if (end - start === 1) {
      emit(start, end)
      return
    }
    for (let k = start; k + 1 < end; k++) emit(k, k + 2)
  } else {
    const bounds: number[] = []
    for (let k = start; k < end; k += widthAt(text, k, text.charCodeAt(k))) bounds.push(k)
    bounds.push(end)
    if (bounds.length === 2) {
      emit(start, end)
      return
    }
    for (let k = 0; k + 2 < bounds.length; k++) emit(bounds[k]!, bounds[k + 2]!)
  }
  if (segmenter === undefined) return
  for (const seg of segmenter.segment(text.slice(start, end))) {
    if (seg.isWordLike === false) continue
    const s = start + seg.index
    const e = s + seg.segment.length
    let chars = 0
    for (let k = s; k < e && chars < 3; k += widthAt(text, k, text.charCodeAt(k))) chars++
    if (chars !== 2) emit(s, e)
  }
}
