// git's abbreviated object ids (`find_unique_abbrev` with `core.abbrev`, default auto): at least a
// length computed from the number of packed objects, then as long as it takes to be unique among
// the repository's objects.

const HEX_SIZE = 40
/** git never abbreviates below 4 hex digits (`MINIMUM_ABBREV`). */
export const MINIMUM_ABBREV = 4
/** The auto length never goes below 7 (`FALLBACK_DEFAULT_ABBREV`). */
const FALLBACK_ABBREV = 7
/** git stops extending once a common prefix reaches `GIT_MAX_RAWSZ` hex digits. */
const MAX_COMMON = 32

/**
 * The auto abbreviation length for `count` packed objects: the bit length of the count, halved
 * and rounded up (two hex digits per doubling squared), at least 7.
 */
export function autoAbbrevLength(count: number): number {
  let bits = 0
  for (let n = count; n > 1; n = Math.floor(n / 2)) bits++
  return Math.max(FALLBACK_ABBREV, Math.ceil((bits + 1) / 2))
}

/**
 * The minimum length `core.abbrev` asks for: -1 for auto (unset, `auto`), 40 for `false`/`no`/
 * `off`, else the number (4..40). Values git would refuse count as auto.
 */
export function configuredAbbrev(value: unknown): number {
  if (value === undefined || value === null) return -1
  if (value === false) return HEX_SIZE
  const text = String(value).trim().toLowerCase()
  if (text === 'auto') return -1
  if (['false', 'no', 'off', ''].includes(text)) return HEX_SIZE
  if (!/^\d+$/.test(text)) return -1
  const n = Number(text)
  return n >= MINIMUM_ABBREV && n <= HEX_SIZE ? n : -1
}

/** Number of leading hex digits `a` and `b` share. */
export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a[i] === b[i]) i++
  return i
}

/**
 * The length git abbreviates `oid` to: `minimum`, extended past the longest prefix it shares
 * with any other object of `neighbours` (objects that share fewer digits do not matter).
 */
export function uniqueAbbrevLength(oid: string, minimum: number, neighbours: Iterable<string>) {
  if (minimum >= HEX_SIZE) return HEX_SIZE
  let length = minimum
  for (const other of neighbours) {
    if (other === oid) continue
    const common = commonPrefix(oid, other)
    if (common < MAX_COMMON && common >= length) length = common + 1
  }
  return length
}

/** The sorted object ids of a pack index (`.idx`). */
export interface SortedOids {
  count: number
  /** The `i`-th object id, as hex. */
  at(i: number): string
}

const hex = (bytes: Uint8Array, start: number) => {
  let out = ''
  for (let i = start; i < start + 20; i++) out += bytes[i]!.toString(16).padStart(2, '0')
  return out
}

function table(bytes: Uint8Array, start: number, stride: number, count: number): SortedOids {
  const needed = start + count * stride
  if (count < 0 || needed > bytes.length) throw new Error('truncated object index')
  return { count, at: (i) => hex(bytes, start + i * stride) }
}

const u32 = (bytes: Uint8Array, at: number) =>
  ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0

/** The object ids of a pack `.idx` file (version 1 or 2). */
export function packIndexOids(bytes: Uint8Array): SortedOids {
  if (bytes.length < 8 + 1024) throw new Error('truncated pack index')
  const v2 = u32(bytes, 0) === 0xff744f63
  if (v2) {
    if (u32(bytes, 4) !== 2) throw new Error('unsupported pack index version')
    return table(bytes, 8 + 1024, 20, u32(bytes, 8 + 255 * 4))
  }
  return table(bytes, 1024 + 4, 24, u32(bytes, 255 * 4))
}

/** The object ids of `index` next to where `oid` sorts (at most two, and `oid` if present). */
export function neighboursIn(index: SortedOids, oid: string): string[] {
  let low = 0
  let high = index.count
  while (low < high) {
    const mid = (low + high) >>> 1
    if (index.at(mid) < oid) low = mid + 1
    else high = mid
  }
  const out: string[] = []
  for (const i of [low - 1, low, low + 1]) if (i >= 0 && i < index.count) out.push(index.at(i))
  return out
}
