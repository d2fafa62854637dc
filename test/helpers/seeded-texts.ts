/** A piece of generated text: a string (UTF-8 encoded) or raw bytes (possibly invalid UTF-8). */
export type Piece = string | number[]

const encoder = new TextEncoder()

/**
 * `count` byte strings, each a UTF-8 BOM (one in `bomOneIn`) followed by 1..`maxPieces` pieces
 * picked by a seeded linear congruential generator: the same seed gives the same texts.
 */
export function* seededTexts(
  seed: number,
  count: number,
  pieces: readonly Piece[],
  options: { maxPieces: number; bomOneIn: number },
): Generator<Uint8Array> {
  let s = seed
  const rand = (n: number) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return s % n
  }
  for (let n = 0; n < count; n++) {
    const parts: number[] = rand(options.bomOneIn) === 0 ? [0xef, 0xbb, 0xbf] : []
    const len = 1 + rand(options.maxPieces)
    for (let i = 0; i < len; i++) {
      const p = pieces[rand(pieces.length)]!
      parts.push(...(typeof p === 'string' ? encoder.encode(p) : p))
    }
    yield new Uint8Array(parts)
  }
}
