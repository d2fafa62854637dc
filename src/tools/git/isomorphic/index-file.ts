const decoder = new TextDecoder()

/** Paths with unmerged (stage 1-3) entries in a git index file, with their stages. */
export function unmergedOfIndex(index: Uint8Array): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>()
  if (index.length < 12 || decoder.decode(index.subarray(0, 4)) !== 'DIRC') return out
  const view = new DataView(index.buffer, index.byteOffset, index.byteLength)
  const version = view.getUint32(4)
  const count = view.getUint32(8)
  if (version !== 2 && version !== 3) return out
  let at = 12
  for (let i = 0; i < count && at + 62 <= index.length; i++) {
    const flags = view.getUint16(at + 60)
    const extended = version === 3 && (flags & 0x4000) !== 0
    const nameStart = at + 62 + (extended ? 2 : 0)
    let nameEnd = nameStart
    while (nameEnd < index.length && index[nameEnd] !== 0) nameEnd++
    const stage = (flags >> 12) & 3
    if (stage > 0) {
      const path = decoder.decode(index.subarray(nameStart, nameEnd))
      const stages = out.get(path) ?? new Set<number>()
      stages.add(stage)
      out.set(path, stages)
    }
    const entryLength = nameEnd - at + 1
    at += Math.ceil(entryLength / 8) * 8
  }
  return out
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
