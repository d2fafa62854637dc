import type { ToolContext } from '../../kernel/tool-spec.ts'
import type { ChunkRecord, VectorIndex } from '../../retrieval/vector-index.ts'
import { regexDefinitionNames } from '../../retrieval/regex-symbols.ts'
import { runBm25 } from './bm25/bm25-mode.ts'
import type { SearchArgs } from './search-args.ts'

/** Candidates per channel. */
export const CHANNEL_DEPTH = 25

/** A channel's ranked chunks (best first). */
export type ChannelHits = ChunkRecord[]

function* chunksOf(index: VectorIndex, keep: (r: ChunkRecord) => boolean): Generator<ChunkRecord> {
  for (const path of index.paths()) for (const r of index.file(path) ?? []) if (keep(r)) yield r
}

function byPathThenStart(a: ChunkRecord, b: ChunkRecord): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : a.startByte - b.startByte
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * The exact channel: chunks holding the query verbatim, tier 1 the query as an identifier on
 * word boundaries, tier 2 a case-sensitive substring, tier 3 case-insensitive; then more
 * occurrences, path and start byte. Returns the hits and the ids of the tier-1 ones.
 */
export function exactChannel(
  index: VectorIndex,
  query: string,
  keep: (r: ChunkRecord) => boolean,
): { hits: ChannelHits; identifierIds: Set<string> } {
  const q = query.trim()
  const word = IDENTIFIER.test(q)
    ? new RegExp(`(?<![\\w$])${escapeRegExp(q)}(?![\\w$])`, 'g')
    : undefined
  const lower = q.toLowerCase()
  const found: { r: ChunkRecord; tier: number; count: number }[] = []
  for (const r of chunksOf(index, keep)) {
    const words = word === undefined ? 0 : (r.text.match(word)?.length ?? 0)
    if (words > 0) found.push({ r, tier: 1, count: words })
    else if (r.text.includes(q)) found.push({ r, tier: 2, count: r.text.split(q).length - 1 })
    else if (r.text.toLowerCase().includes(lower))
      found.push({ r, tier: 3, count: r.text.toLowerCase().split(lower).length - 1 })
  }
  found.sort((a, b) => a.tier - b.tier || b.count - a.count || byPathThenStart(a.r, b.r))
  const hits = found.slice(0, CHANNEL_DEPTH)
  return {
    hits: hits.map((f) => f.r),
    identifierIds: new Set(hits.filter((f) => f.tier === 1).map((f) => f.r.id)),
  }
}

/**
 * The symbol channel: chunks defining a function, class, method, interface, type, enum, struct,
 * trait or module named like one of the query's identifiers — exact case first, then
 * case-insensitive; then path and start byte. Definitions come from the parser where it read the
 * chunk's file (`record.symbols`), else from a regex over the chunk's text.
 */
export function symbolChannel(
  index: VectorIndex,
  query: string,
  keep: (r: ChunkRecord) => boolean,
): ChannelHits {
  const names = new Set(query.match(/[A-Za-z_$][\w$]*/g)?.filter((n) => n.length >= 2) ?? [])
  if (names.size === 0) return []
  const lowered = new Set([...names].map((n) => n.toLowerCase()))
  const found: { r: ChunkRecord; tier: number }[] = []
  for (const r of chunksOf(index, keep)) {
    let tier = 0
    for (const name of r.symbols ?? regexDefinitionNames(r.text)) {
      if (names.has(name)) tier = 1
      else if (tier === 0 && lowered.has(name.toLowerCase())) tier = 2
      if (tier === 1) break
    }
    if (tier > 0) found.push({ r, tier })
  }
  found.sort((a, b) => a.tier - b.tier || byPathThenStart(a.r, b.r))
  return found.slice(0, CHANNEL_DEPTH).map((f) => f.r)
}

/** The lexical channel: the bm25 mode's top 25 hits, mapped onto indexed chunks. */
export async function lexicalChannel(
  index: VectorIndex,
  args: SearchArgs,
  context: ToolContext,
  keep: (r: ChunkRecord) => boolean,
): Promise<ChannelHits> {
  const bm25Args: SearchArgs = { mode: 'bm25', query: args.query, limit: CHANNEL_DEPTH }
  if (args.path !== undefined) bm25Args.path = args.path
  if (args.include !== undefined) bm25Args.include = args.include
  let result
  try {
    result = await runBm25(bm25Args, context)
  } catch {
    return [] // e.g. a query of stop words only: no lexical evidence
  }
  const hits = (result.metadata?.hits ?? []) as { path: string; start_line: number }[]
  const out: ChunkRecord[] = []
  const seen = new Set<string>()
  for (const hit of hits) {
    const record = index
      .file(hit.path)
      ?.find((r) => r.startLine <= hit.start_line && hit.start_line <= r.endLine)
    if (record === undefined || seen.has(record.id) || !keep(record)) continue
    seen.add(record.id)
    out.push(record)
  }
  return out
}
