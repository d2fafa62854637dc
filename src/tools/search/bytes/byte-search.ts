import type { ByteIndex } from '../../../workspace/workspace-services.ts'
import { inKernelMemory, simdCountLineEnds, simdFinder } from './simd-bytes.ts'
import {
  CANDIDATE_NS,
  FOLDED_STEP,
  SCAN_NS,
  STEP_NS,
  VECTOR_COUNT_MIN,
  VECTOR_NS,
} from '../tuning.ts'

/**
 * A literal to find in raw UTF-8 bytes, without decoding them. Decoding is faithful for every
 * well-formed sequence and a lead byte is never swallowed by a malformed one, so a text contains
 * a literal (free of U+FFFD and U+FEFF) exactly when its bytes contain the literal's encoding.
 */
export interface ByteNeedle {
  /** The literal's UTF-8 bytes; ASCII letters lower-cased when `foldAsciiCase`. */
  bytes: Uint8Array
  /** Match ASCII letters in either case (the literal is all ASCII then). */
  foldAsciiCase: boolean
  /**
   * Under Unicode case folding, U+212A KELVIN SIGN folds to `k` and U+017F LONG S to `s`: a
   * case-insensitive `k`/`s` may match bytes the ASCII fold misses. Such needles say so here, and
   * callers fall back to decoding when the text holds either sign ({@link hasFoldingSigns}).
   */
  foldsNonAscii: boolean
}

/**
 * How often each byte value occurs in source code and its documentation, per million bytes (at
 * least 1). Measured by `scripts/byte-frequencies.ts` over the text files of this package's
 * dependencies (8076 files, 74 MB). {@link byteFinder} estimates by them what each way of looking for
 * a literal costs.
 */
// prettier-ignore
const BYTE_FREQUENCIES = Uint32Array.from([
  1, 1, 1, 1, 1, 1, 1, 1, 1, 4947, 21074, 1, 1, 201, 1, 1,
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
  156899, 1070, 8954, 577, 504, 102, 1927, 2762, 11062, 11063, 7357, 879, 12508, 5713, 12747, 8025,
  4830, 3732, 4286, 2589, 2122, 1764, 1888, 1359, 1678, 1407, 7075, 7124, 1098, 8864, 1914, 1280,
  1019, 8367, 3364, 5280, 3444, 4932, 2494, 1144, 1214, 4680, 766, 953, 2175, 2237, 2897, 2634,
  2873, 1515, 2877, 4879, 4340, 1406, 874, 971, 289, 562, 246, 2154, 1467, 2149, 145, 9025,
  3369, 38354, 7318, 23186, 19677, 74959, 12639, 12403, 12929, 39362, 1751, 4388, 23266, 14319, 42225, 41059,
  18045, 1252, 42960, 37103, 55081, 18448, 5917, 4701, 4850, 9131, 1168, 5183, 1878, 5182, 24, 1,
  467, 447, 445, 251, 140, 90, 44, 87, 146, 59, 81, 191, 137, 81, 29, 104,
  92, 31, 35, 41, 136, 128, 53, 91, 111, 119, 78, 60, 141, 166, 132, 86,
  101, 131, 26, 69, 99, 47, 45, 113, 127, 124, 52, 54, 44, 118, 89, 95,
  223, 161, 91, 105, 105, 186, 62, 63, 240, 61, 107, 131, 250, 179, 236, 108,
  1, 1, 45, 430, 165, 140, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
  1136, 485, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
  1, 1, 220, 750, 116, 393, 224, 173, 105, 79, 47, 210, 321, 89, 19, 18,
  4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
])
const FREQUENCY_TOTAL = BYTE_FREQUENCIES.reduce((sum, f) => sum + f, 0)
const frequency = (byte: number) => BYTE_FREQUENCIES[byte]! / FREQUENCY_TOTAL

/**
 * `Uint8Array.prototype.indexOf`: how byte values are found in the files of a workspace that
 * names no faster way (`WorkspaceServices.byteIndex`).
 */
export const TYPED_ARRAY_INDEX: ByteIndex = {
  indexOf: (bytes, byte, from) => bytes.indexOf(byte, from),
  nsPerByte: SCAN_NS,
}

/** The first offset at or after `from` holding `byte`, or -1, found by `index`. */
export function indexOfByte(
  bytes: Uint8Array,
  byte: number,
  from = 0,
  index: ByteIndex = TYPED_ARRAY_INDEX,
): number {
  return index.indexOf(bytes, byte, from)
}

const UTF8 = new TextEncoder()

/** A needle for `literal`, or undefined when bytes cannot answer for it exactly. */
export function byteNeedle(literal: string, caseInsensitive: boolean): ByteNeedle | undefined {
  if (literal.length === 0 || /[\uFFFD\uFEFF\n\r]/.test(literal)) return undefined
  if (caseInsensitive) {
    // eslint-disable-next-line no-control-regex
    if (!/^[\x00-\x7f]+$/.test(literal)) return undefined
    const lower = literal.toLowerCase()
    return { bytes: UTF8.encode(lower), foldAsciiCase: true, foldsNonAscii: /[ks]/.test(lower) }
  }
  return { bytes: UTF8.encode(literal), foldAsciiCase: false, foldsNonAscii: false }
}

const isLetter = (b: number) => (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7a

/** A compiled finder: the offset of the next occurrence at or after `from`, or -1. */
export type ByteFinder = (text: Uint8Array, from: number) => number

/** One way of finding a needle, with its estimated cost per byte of text (ns). */
export interface FinderStrategy {
  find: ByteFinder
  nsPerByte: number
}

/** Whether the needle byte `want` matches the text byte `b` (`want` lower-cased when folding). */
const byteMatches = (want: number, b: number, fold: boolean) =>
  b === want || (fold && isLetter(want) && (b | 0x20) === want)

/**
 * Find a needle by its rarest byte, located with `index` (both cases of a folded letter); each
 * place found is checked whole. Best when that byte is rare.
 */
export function anchorFinder(
  needle: ByteNeedle,
  index: ByteIndex = TYPED_ARRAY_INDEX,
): FinderStrategy {
  const { bytes, foldAsciiCase: fold } = needle
  const n = bytes.length
  const cost = (b: number) =>
    fold && isLetter(b) ? frequency(b) + frequency(b & ~0x20) : frequency(b)
  let anchor = 0
  for (let i = 1; i < n; i++) if (cost(bytes[i]!) < cost(bytes[anchor]!)) anchor = i
  const a = bytes[anchor]!
  const matchesAt = (text: Uint8Array, start: number) => {
    for (let i = 0; i < n; i++) if (!byteMatches(bytes[i]!, text[start + i]!, fold)) return false
    return true
  }
  const twoCases = fold && isLetter(a)
  const { indexOf, nsPerByte: scanNs } = index
  const nsPerByte = (twoCases ? 2 : 1) * scanNs + cost(a) * CANDIDATE_NS
  if (!twoCases) {
    const find: ByteFinder = (text, from) => {
      const last = text.length - n
      for (let at = indexOf(text, a, from + anchor); at !== -1; at = indexOf(text, a, at + 1)) {
        const start = at - anchor
        if (start > last) return -1
        if (matchesAt(text, start)) return start
      }
      return -1
    }
    return { find, nsPerByte }
  }
  const upper = a & ~0x20
  const find: ByteFinder = (text, from) => {
    const last = text.length - n
    let lo = indexOf(text, a, from + anchor)
    let up = indexOf(text, upper, from + anchor)
    while (lo !== -1 || up !== -1) {
      const at = up === -1 || (lo !== -1 && lo < up) ? lo : up
      const start = at - anchor
      if (start > last) return -1
      if (matchesAt(text, start)) return start
      if (at === lo) lo = indexOf(text, a, at + 1)
      else up = indexOf(text, upper, at + 1)
    }
    return -1
  }
  return { find, nsPerByte }
}

/**
 * Find a needle with Horspool's algorithm: compare at its last byte and skip by how far that
 * text byte lies from the needle's end, so most bytes are never read. Best for needles whose
 * bytes are all common, where an anchor would be found at too many places.
 */
export function horspoolFinder(needle: ByteNeedle): FinderStrategy {
  const { bytes, foldAsciiCase: fold } = needle
  const m = bytes.length
  const last = m - 1
  const shift = new Int32Array(256).fill(m)
  for (let i = 0; i < last; i++) {
    const b = bytes[i]!
    shift[b] = last - i
    if (fold && isLetter(b)) shift[b & ~0x20] = last - i
  }
  let meanShift = 0
  for (let b = 0; b < 256; b++) meanShift += frequency(b) * shift[b]!
  const tail = bytes[last]!
  const find: ByteFinder = (text, from) => {
    const n = text.length
    for (let i = from + last; i < n; i += shift[text[i]!]!) {
      if (!byteMatches(tail, text[i]!, fold)) continue
      let j = last - 1
      let k = i - 1
      while (j >= 0 && byteMatches(bytes[j]!, text[k]!, fold)) {
        j--
        k--
      }
      if (j < 0) return i - last
    }
    return -1
  }
  return { find, nsPerByte: (STEP_NS * (fold ? FOLDED_STEP : 1)) / meanShift }
}

/**
 * Compile a finder for `needle`, anchors found by `index`: whichever of {@link anchorFinder} and
 * {@link horspoolFinder} the byte frequencies of source code say is cheaper, and for bytes in the
 * kernel memory the WebAssembly SIMD kernel ({@link vectorFinder}) where that is cheaper still.
 */
export function byteFinder(needle: ByteNeedle, index: ByteIndex = TYPED_ARRAY_INDEX): ByteFinder {
  const anchor = anchorFinder(needle, index)
  const horspool = needle.bytes.length < 3 ? undefined : horspoolFinder(needle)
  const best = horspool !== undefined && horspool.nsPerByte < anchor.nsPerByte ? horspool : anchor
  // memchr on a rare byte outruns the kernel: it is kept for such needles.
  const vector = best.nsPerByte > VECTOR_NS ? vectorFinder(needle) : undefined
  if (vector === undefined) return best.find
  const { find } = best
  return (text, from) => (inKernelMemory(text) ? vector(text, from) : find(text, from))
}

/**
 * The SIMD kernel's finder for `needle`, testing 16 places at a time by its two rarest bytes
 * (both cases of a folded letter counted), as the memchr crate's packed pair does.
 */
export function vectorFinder(needle: ByteNeedle): ByteFinder | undefined {
  const { bytes, foldAsciiCase: fold } = needle
  const cost = (b: number) =>
    fold && isLetter(b) ? frequency(b) + frequency(b & ~0x20) : frequency(b)
  const byCost = [...bytes.keys()].sort((a, b) => cost(bytes[a]!) - cost(bytes[b]!) || a - b)
  // As byteMatches: a folded letter of the needle (lower-cased) matches either case of it.
  const masks = bytes.map((b) => (fold && b >= 0x61 && b <= 0x7a ? 0x20 : 0))
  return simdFinder(bytes, masks, byCost[0]!, byCost[1] ?? byCost[0]!)
}

/**
 * Count the lines of `text` (split at `\n`, found by `index`) that contain the needle, stopping
 * after `max`. Exact for a pure-literal pattern.
 */
export function countLinesWith(
  find: ByteFinder,
  text: Uint8Array,
  max: number,
  index: ByteIndex = TYPED_ARRAY_INDEX,
): number {
  let count = 0
  const { indexOf } = index
  for (let at = find(text, 0); at !== -1 && count < max;) {
    count++
    const end = indexOf(text, 0x0a, at)
    if (end === -1) break
    at = find(text, end + 1)
  }
  return count
}

const sequence = (...bytes: number[]): ByteFinder =>
  byteFinder({ bytes: new Uint8Array(bytes), foldAsciiCase: false, foldsNonAscii: false })
const KELVIN_SIGN = sequence(0xe2, 0x84, 0xaa)
const LONG_S = sequence(0xc5, 0xbf)
const CAPITAL_I_WITH_DOT = sequence(0xc4, 0xb0)

/** Whether `text` holds U+212A KELVIN SIGN or U+017F LONG S, which case-fold to `k` and `s`. */
export function hasFoldingSigns(text: Uint8Array): boolean {
  return KELVIN_SIGN(text, 0) !== -1 || LONG_S(text, 0) !== -1
}

/**
 * Whether `text` holds U+212A KELVIN SIGN or U+0130, which `toLowerCase` turns into `k` and
 * `i̇` (an ASCII `i` and a combining dot).
 */
export function hasLowerCasingSigns(text: Uint8Array): boolean {
  return KELVIN_SIGN(text, 0) !== -1 || CAPITAL_I_WITH_DOT(text, 0) !== -1
}

/**
 * How many line ends (`\n`) `bytes` holds in `[from, to)`: by the SIMD kernel for bytes in the
 * kernel memory (see `searchBuffers`), else four bytes at a time, a zero-byte test on each 32-bit
 * word whose per-byte results are summed in the word's four lanes (two words a step, folded
 * before a lane can reach 256): about three times as fast as an `indexOf` per line.
 */
export function countLineEnds(bytes: Uint8Array, from: number, to: number): number {
  if (to - from >= VECTOR_COUNT_MIN && inKernelMemory(bytes))
    return simdCountLineEnds(bytes, from, to)
  let n = 0
  let i = from
  const offset = bytes.byteOffset
  for (; i < to && ((offset + i) & 3) !== 0; i++) if (bytes[i] === 0x0a) n++
  const pairs = ((to - i) >> 3) << 1
  if (pairs > 0) {
    const view = new Uint32Array(bytes.buffer, offset + i, pairs)
    for (let k = 0; k < pairs;) {
      // Each step adds at most 2 to a lane: 127 steps keep every lane below 256.
      const stop = Math.min(pairs, k + 254)
      let lanes = 0
      for (; k < stop; k += 2) {
        const t = view[k]! ^ 0x0a0a0a0a
        const u = view[k + 1]! ^ 0x0a0a0a0a
        // Bit 7 of each byte is set exactly where that byte of t (of u) is zero.
        lanes +=
          ((~(((t & 0x7f7f7f7f) + 0x7f7f7f7f) | t | 0x7f7f7f7f) >>> 7) & 0x01010101) +
          ((~(((u & 0x7f7f7f7f) + 0x7f7f7f7f) | u | 0x7f7f7f7f) >>> 7) & 0x01010101)
      }
      n += (lanes & 0xff) + ((lanes >>> 8) & 0xff) + ((lanes >>> 16) & 0xff) + (lanes >>> 24)
    }
    i += pairs << 2
  }
  for (; i < to; i++) if (bytes[i] === 0x0a) n++
  return n
}
