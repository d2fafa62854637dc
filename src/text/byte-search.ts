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
 * How common each byte value is in source code and its documentation: 0 for the rarest, 255 for
 * the most common. Measured by `scripts/byte-ranks.ts` over the text files of this package's
 * dependencies (8076 files, 74 MB). A literal is anchored on its rarest byte, so that the fewest
 * places are looked at.
 */
// prettier-ignore
const BYTE_RANKS = Uint8Array.from([
  0, 35, 64, 36, 37, 38, 39, 1, 2, 217, 244, 3, 4, 144, 40, 41,
  42, 43, 44, 45, 46, 47, 48, 49, 65, 50, 57, 58, 51, 52, 62, 66,
  255, 172, 230, 164, 162, 112, 191, 200, 233, 234, 226, 168, 236, 221, 238, 227,
  213, 207, 208, 198, 192, 187, 189, 180, 185, 182, 223, 224, 173, 229, 190, 179,
  171, 228, 204, 220, 206, 216, 197, 175, 177, 211, 166, 169, 195, 196, 203, 199,
  201, 184, 202, 215, 209, 181, 167, 170, 154, 163, 151, 194, 183, 193, 135, 231,
  205, 248, 225, 245, 243, 254, 237, 235, 239, 249, 186, 210, 246, 240, 251, 250,
  241, 178, 252, 247, 253, 242, 222, 212, 214, 232, 176, 219, 188, 218, 76, 53,
  160, 159, 158, 153, 133, 105, 83, 102, 136, 91, 99, 143, 131, 100, 78, 113,
  108, 79, 80, 81, 130, 126, 89, 107, 119, 123, 97, 92, 134, 139, 129, 101,
  111, 127, 77, 96, 110, 86, 85, 120, 125, 124, 88, 90, 82, 122, 104, 109,
  147, 137, 106, 115, 116, 142, 94, 95, 150, 93, 117, 128, 152, 141, 149, 118,
  5, 6, 84, 157, 138, 132, 59, 7, 8, 60, 54, 67, 71, 70, 72, 68,
  174, 161, 55, 9, 10, 11, 12, 13, 61, 56, 14, 15, 16, 17, 18, 19,
  69, 63, 146, 165, 121, 156, 148, 140, 114, 98, 87, 145, 155, 103, 75, 74,
  73, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
])

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

/** Compile a finder for `needle`, anchored on its rarest byte (found with native `indexOf`). */
export function byteFinder(needle: ByteNeedle): ByteFinder {
  const { bytes, foldAsciiCase } = needle
  const n = bytes.length
  let anchor = 0
  for (let i = 1; i < n; i++) if (BYTE_RANKS[bytes[i]!]! < BYTE_RANKS[bytes[anchor]!]!) anchor = i
  const a = bytes[anchor]!
  const matchesAt = foldAsciiCase
    ? (text: Uint8Array, start: number) => {
        for (let i = 0; i < n; i++) {
          const b = text[start + i]!
          const want = bytes[i]!
          if (b !== want && !(isLetter(want) && (b | 0x20) === want)) return false
        }
        return true
      }
    : (text: Uint8Array, start: number) => {
        for (let i = 0; i < n; i++) if (text[start + i] !== bytes[i]) return false
        return true
      }
  if (!foldAsciiCase || !isLetter(a)) {
    return (text, from) => {
      const last = text.length - n
      for (let at = text.indexOf(a, from + anchor); at !== -1; at = text.indexOf(a, at + 1)) {
        const start = at - anchor
        if (start > last) return -1
        if (matchesAt(text, start)) return start
      }
      return -1
    }
  }
  const upper = a & ~0x20
  return (text, from) => {
    const last = text.length - n
    let lo = text.indexOf(a, from + anchor)
    let up = text.indexOf(upper, from + anchor)
    while (lo !== -1 || up !== -1) {
      const at = up === -1 || (lo !== -1 && lo < up) ? lo : up
      const start = at - anchor
      if (start > last) return -1
      if (matchesAt(text, start)) return start
      if (at === lo) lo = text.indexOf(a, at + 1)
      else up = text.indexOf(upper, at + 1)
    }
    return -1
  }
}

/**
 * Count the lines of `text` (split at `\n`) that contain the needle, stopping after `max`.
 * Exact for a pure-literal pattern.
 */
export function countLinesWith(find: ByteFinder, text: Uint8Array, max: number): number {
  let count = 0
  for (let at = find(text, 0); at !== -1 && count < max;) {
    count++
    const end = text.indexOf(0x0a, at)
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
