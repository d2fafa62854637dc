const decoder = new TextDecoder()

/** One stage-0 entry of a git index: its blob, mode and the stat data git recorded. */
export interface IndexEntry {
  path: string
  oid: string
  /** Mode as a number (`0o100644`, `0o100755`, `0o120000`, `0o160000`). */
  mode: number
  ctimeSeconds: number
  ctimeNanoseconds: number
  mtimeSeconds: number
  mtimeNanoseconds: number
  ino: number
  uid: number
  gid: number
  size: number
  /** assume-valid or skip-worktree: git does not look at the working-tree file. */
  skipWorktree: boolean
}

/** A parsed index: stage-0 entries by path, and the unmerged paths with their stages. */
export interface ParsedIndex {
  entries: Map<string, IndexEntry>
  unmerged: Map<string, Set<number>>
  /**
   * The valid directories of the cache tree (the `TREE` extension git keeps): directory path
   * ('' for the root) to the tree id its index entries make.
   */
  cacheTree: Map<string, string>
}

/** A path's bytes as text: ASCII directly (most paths), else UTF-8. */
function pathText(bytes: Uint8Array, start: number, end: number): string {
  let out = ''
  for (let i = start; i < end; i++) {
    const b = bytes[i]!
    if (b >= 0x80) return decoder.decode(bytes.subarray(start, end))
    out += String.fromCharCode(b)
  }
  return out
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'))
const hex = (bytes: Uint8Array, start = 0, end = bytes.length) => {
  let out = ''
  for (let i = start; i < end; i++) out += HEX[bytes[i]!]
  return out
}

/** Reads git's variable-width offset (index v4 prefix compression). */
function readVarint(index: Uint8Array, at: number): [number, number] {
  let byte = index[at++]!
  let value = byte & 0x7f
  while (byte & 0x80) {
    byte = index[at++]!
    value = ((value + 1) << 7) | (byte & 0x7f)
  }
  return [value, at]
}

/**
 * The entries of a git index file (versions 2, 3 and 4; see git's
 * `Documentation/gitformat-index.txt`), or undefined when it is not one this reader knows.
 */
export function parseIndex(index: Uint8Array): ParsedIndex | undefined {
  if (index.length < 12 || decoder.decode(index.subarray(0, 4)) !== 'DIRC') return undefined
  const view = new DataView(index.buffer, index.byteOffset, index.byteLength)
  const version = view.getUint32(4)
  const count = view.getUint32(8)
  if (version < 2 || version > 4) return undefined
  const entries = new Map<string, IndexEntry>()
  const unmerged = new Map<string, Set<number>>()
  let at = 12
  let previous = ''
  for (let i = 0; i < count; i++) {
    if (at + 62 > index.length) return undefined
    const flags = view.getUint16(at + 60)
    const extended = version >= 3 && (flags & 0x4000) !== 0
    const extendedFlags = extended ? view.getUint16(at + 62) : 0
    const nameStart = at + 62 + (extended ? 2 : 0)
    let path: string
    let next: number
    if (version === 4) {
      const [strip, suffixStart] = readVarint(index, nameStart)
      let end = suffixStart
      while (end < index.length && index[end] !== 0) end++
      const keep = encodeUtf8Length(previous) - strip
      path = decodePrefix(previous, keep) + decoder.decode(index.subarray(suffixStart, end))
      next = end + 1
    } else {
      let end = nameStart
      while (end < index.length && index[end] !== 0) end++
      path = pathText(index, nameStart, end)
      next = at + Math.ceil((end - at + 1) / 8) * 8
    }
    previous = path
    const stage = (flags >> 12) & 3
    if (stage > 0) {
      const stages = unmerged.get(path) ?? new Set<number>()
      stages.add(stage)
      unmerged.set(path, stages)
    } else {
      entries.set(path, {
        path,
        ctimeSeconds: view.getUint32(at),
        ctimeNanoseconds: view.getUint32(at + 4),
        mtimeSeconds: view.getUint32(at + 8),
        mtimeNanoseconds: view.getUint32(at + 12),
        ino: view.getUint32(at + 20),
        mode: view.getUint32(at + 24),
        uid: view.getUint32(at + 28),
        gid: view.getUint32(at + 32),
        size: view.getUint32(at + 36),
        oid: hex(index, at + 40, at + 60),
        skipWorktree: (flags & 0x8000) !== 0 || (extendedFlags & 0x4000) !== 0,
      })
    }
    at = next
  }
  return { entries, unmerged, cacheTree: readCacheTree(index, view, at) }
}

/** The `TREE` extension's valid directories, from the extensions starting at `at`. */
function readCacheTree(index: Uint8Array, view: DataView, at: number): Map<string, string> {
  const out = new Map<string, string>()
  const end = index.length - 20
  while (at + 8 <= end) {
    const signature = decoder.decode(index.subarray(at, at + 4))
    const size = view.getUint32(at + 4)
    if (signature === 'TREE') {
      parseTreeExtension(index.subarray(at + 8, at + 8 + size), out)
      return out
    }
    at += 8 + size
  }
  return out
}

function parseTreeExtension(data: Uint8Array, out: Map<string, string>): void {
  let at = 0
  const node = (parent: string | undefined): void => {
    const nul = data.indexOf(0, at)
    const newline = data.indexOf(10, nul)
    if (nul < 0 || newline < 0) throw new RangeError('truncated cache tree')
    const name = decoder.decode(data.subarray(at, nul))
    const [count, subtrees] = decoder
      .decode(data.subarray(nul + 1, newline))
      .split(' ')
      .map(Number)
    at = newline + 1
    const path = parent === undefined ? '' : parent === '' ? name : `${parent}/${name}`
    if (count! >= 0) {
      out.set(path, hex(data.subarray(at, at + 20)))
      at += 20
    }
    for (let i = 0; i < subtrees!; i++) node(path)
  }
  try {
    node(undefined)
  } catch {
    // A cache tree git cannot have written: use none of it.
    out.clear()
  }
}

const encoder = new TextEncoder()
const encodeUtf8Length = (text: string) => encoder.encode(text).length
const decodePrefix = (text: string, bytes: number) =>
  decoder.decode(encoder.encode(text).subarray(0, Math.max(0, bytes)))

/** Paths with unmerged (stage 1-3) entries in a git index file, with their stages. */
export function unmergedOfIndex(index: Uint8Array): Map<string, Set<number>> {
  return parseIndex(index)?.unmerged ?? new Map()
}

/** The porcelain letters of an unmerged path from its stages (as `git status` prints them). */
export function unmergedCode(stages: Set<number>): string {
  const key = [1, 2, 3].map((s) => (stages.has(s) ? '1' : '0')).join('')
  const codes: Record<string, string> = {
    '111': 'UU',
    '011': 'AA',
    '110': 'UD',
    '101': 'DU',
    '010': 'AU',
    '001': 'UA',
    '100': 'DD',
  }
  return codes[key] ?? 'UU'
}
