import type { ToolContext } from '../../kernel/tool-spec.ts'
import type { ChunkRecord } from '../../retrieval/vector-index.ts'
import type { WorkspaceRetrieval } from '../../retrieval/workspace-retrieval.ts'
import { toolSuccess, type ToolResult } from '../../tool-result.ts'
import { CHANNEL_DEPTH, exactChannel, lexicalChannel, symbolChannel } from './hybrid-channels.ts'
import {
  HitVerifier,
  anchorsOf,
  renderChunkLines,
  retrievalArgs,
  retrievalState,
} from './retrieval-hits.ts'
import type { SearchArgs } from './search-args.ts'
import { semanticCandidates } from './semantic-mode.ts'

/** The RRF constant: a chunk ranked r in a channel adds 1 / (60 + r). */
export const RRF_K = 60

/** The four channels, in the order the output names them. */
export const CHANNELS = ['exact', 'lexical', 'symbol', 'semantic'] as const
export type ChannelName = (typeof CHANNELS)[number]

/** One fused chunk. */
export interface FusedHit {
  record: ChunkRecord
  fusedScore: number
  /** 1-based rank in each channel that found it. */
  channels: Partial<Record<ChannelName, number>>
  exactIdentifier: boolean
}

/**
 * Reciprocal rank fusion: score Σ 1/(60 + rank) over the channels; exact-identifier hits first,
 * then score (desc), path, start byte; at most 2 chunks per file.
 */
export function fuse(
  channels: Partial<Record<ChannelName, readonly ChunkRecord[]>>,
  identifierIds: ReadonlySet<string>,
  perFile = 2,
): FusedHit[] {
  const byId = new Map<string, FusedHit>()
  for (const name of CHANNELS) {
    const hits = channels[name] ?? []
    hits.forEach((record, i) => {
      const hit = byId.get(record.id) ?? {
        record,
        fusedScore: 0,
        channels: {},
        exactIdentifier: identifierIds.has(record.id),
      }
      hit.fusedScore += 1 / (RRF_K + i + 1)
      hit.channels[name] = i + 1
      byId.set(record.id, hit)
    })
  }
  const ranked = [...byId.values()].sort(
    (a, b) =>
      Number(b.exactIdentifier) - Number(a.exactIdentifier) ||
      b.fusedScore - a.fusedScore ||
      (a.record.path < b.record.path ? -1 : a.record.path > b.record.path ? 1 : 0) ||
      a.record.startByte - b.record.startByte,
  )
  const perPath = new Map<string, number>()
  return ranked.filter((h) => {
    const n = perPath.get(h.record.path) ?? 0
    perPath.set(h.record.path, n + 1)
    return n < perFile
  })
}

/** `ok`/`unavailable`; for `symbol` its engine: `tree_sitter` or `regex`. */
type ChannelState = string

/** `search` mode `hybrid`: exact, lexical, symbol and semantic evidence fused by RRF (k = 60). */
export async function runHybrid(
  args: SearchArgs,
  context: ToolContext,
  retrieval: WorkspaceRetrieval,
): Promise<ToolResult> {
  const { limit, keep } = retrievalArgs(args, context)
  await retrieval.waitReady(retrieval.readinessTimeoutMs, context.signal)
  const index = retrieval.index
  const state: Record<ChannelName, ChannelState> = {
    exact: 'ok',
    lexical: 'ok',
    symbol: retrieval.symbolEngine(),
    semantic: 'ok',
  }
  const exact = exactChannel(index, args.query, keep)
  const lexical = await lexicalChannel(index, args, context, keep)
  const symbol = symbolChannel(index, args.query, keep)
  let semantic: ChunkRecord[] = []
  let semanticError: string | undefined
  try {
    semantic = (
      await semanticCandidates(retrieval, args.query, CHANNEL_DEPTH, keep, context.signal)
    ).map((s) => s.record)
  } catch (error) {
    if (context.signal.aborted) throw error
    state.semantic = 'unavailable'
    semanticError = error instanceof Error ? error.message : String(error)
  }
  const fused = fuse({ exact: exact.hits, lexical, symbol, semantic }, exact.identifierIds)
  const verifier = new HitVerifier(context, retrieval)
  const hits: FusedHit[] = []
  for (const hit of fused) {
    if (hits.length >= limit) break
    if (await verifier.verify(hit.record)) hits.push(hit)
  }
  const { status, fallback } = retrievalState(retrieval, verifier.stale)
  const sections = hits.map((h, i) => {
    const via = CHANNELS.filter((c) => h.channels[c] !== undefined).map(
      (c) => `${c}#${h.channels[c]}`,
    )
    const head = `${i + 1}. ${h.record.path}:${h.record.startLine}-${h.record.endLine} (rrf ${h.fusedScore.toFixed(5)}; ${via.join(', ')})`
    return [head, ...renderChunkLines(h.record)].join('\n')
  })
  const notes = [
    ...(fallback === 'building'
      ? [`[index building: ${status.indexedFiles}/${status.eligibleFiles} files indexed]`]
      : []),
    ...(semanticError === undefined ? [] : [`[semantic channel unavailable: ${semanticError}]`]),
  ]
  return toolSuccess(
    'search',
    [...(sections.length === 0 ? ['(no matches)'] : sections), ...notes].join('\n'),
    {
      mode: 'hybrid',
      algorithm: 'rrf_k60',
      status,
      fallback,
      truncated: fused.length > hits.length + verifier.stale,
      source_anchors: anchorsOf(hits.map((h) => h.record)),
      channels: state,
      results: hits.map((h) => ({
        chunk_id: h.record.id,
        path: h.record.path,
        start_line: h.record.startLine,
        end_line: h.record.endLine,
        fused_score: h.fusedScore,
        channels: h.channels,
        exact_identifier: h.exactIdentifier,
        digest_verified: true,
      })),
    },
  )
}
