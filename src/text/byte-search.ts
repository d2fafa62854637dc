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
 * Byte frequency rank in source code and prose (higher is more common), used to anchor the
 * search on the needle's rarest byte.
 */
function commonness(byte: number): number {
  if (byte === 0x20 || byte === 0x65 || byte === 0x74) return 9
  if (byte >= 0x61 && byte <= 0x7a) return 'aionsrlcdu'.includes(String.fromCharCode(byte)) ? 8 : 6
  if (byte === 0x0a || byte === 0x09 || byte === 0x2e || byte === 0x2c || byte === 0x28) return 7
  if (byte === 0x29 || byte === 0x3b || byte === 0x3d || byte === 0x22 || byte === 0x27) return 7
  if (byte >= 0x41 && byte <= 0x5a) return 4
  if (byte >= 0x30 && byte <= 0x39) return 5
  if (byte >= 0x80) return 3
  return 5
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

/** Compile a finder for `needle`, anchored on its rarest byte (found with native `indexOf`). */
export function byteFinder(needle: ByteNeedle): ByteFinder {
  const { bytes, foldAsciiCase } = needle
  const n = bytes.length
  let anchor = 0
  for (let i = 1; i < n; i++) if (commonness(bytes[i]!) < commonness(bytes[anchor]!)) anchor = i
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
