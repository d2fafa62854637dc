import type { ToolContext } from '../../kernel/tool-spec.ts'
import type { ScoredChunk } from '../../retrieval/vector-index.ts'
import type { WorkspaceRetrieval } from '../../retrieval/workspace-retrieval.ts'
import { toolSuccess, type ToolResult } from '../../tool-result.ts'
import {
  HitVerifier,
  anchorsOf,
  renderChunkLines,
  retrievalArgs,
  retrievalState,
} from './retrieval-hits.ts'
import type { SearchArgs } from './search-args.ts'

/** Verified hits, best first, until `limit` stand (stale ones are dropped and re-queued). */
export async function verifiedTop(
  candidates: readonly ScoredChunk[],
  limit: number,
  verifier: HitVerifier,
): Promise<ScoredChunk[]> {
  const out: ScoredChunk[] = []
  for (const c of candidates) {
    if (out.length >= limit) break
    if (await verifier.verify(c.record)) out.push(c)
  }
  return out
}

/** The query's vector ranked against every indexed chunk (exact cosine), path filters applied. */
export async function semanticCandidates(
  retrieval: WorkspaceRetrieval,
  query: string,
  k: number,
  keep: Parameters<WorkspaceRetrieval['index']['search']>[2],
  signal: AbortSignal,
): Promise<ScoredChunk[]> {
  const vector = await retrieval.embedQuery(query, signal)
  return retrieval.index.search(vector, k, keep)
}

/** `search` mode `semantic`: exact cosine over the session's index, every hit verified. */
export async function runSemantic(
  args: SearchArgs,
  context: ToolContext,
  retrieval: WorkspaceRetrieval,
): Promise<ToolResult> {
  const { limit, keep } = retrievalArgs(args, context)
  await retrieval.waitReady(retrieval.readinessTimeoutMs, context.signal)
  const candidates = await semanticCandidates(
    retrieval,
    args.query,
    limit * 4,
    keep,
    context.signal,
  )
  const verifier = new HitVerifier(context, retrieval)
  const hits = await verifiedTop(candidates, limit, verifier)
  const { status, fallback } = retrievalState(retrieval, verifier.stale)
  const sections = hits.map((h, i) =>
    [
      `${i + 1}. ${h.record.path}:${h.record.startLine}-${h.record.endLine} (score ${h.score.toFixed(4)})`,
      ...renderChunkLines(h.record),
    ].join('\n'),
  )
  const notes =
    fallback === 'building'
      ? [`[index building: ${status.indexedFiles}/${status.eligibleFiles} files indexed]`]
      : []
  return toolSuccess(
    'search',
    [...(sections.length === 0 ? ['(no matches)'] : sections), ...notes].join('\n'),
    {
      mode: 'semantic',
      algorithm: 'exact_cosine',
      status,
      fallback,
      truncated: candidates.length > hits.length + verifier.stale,
      source_anchors: anchorsOf(hits.map((h) => h.record)),
      results: hits.map((h) => ({
        chunk_id: h.record.id,
        path: h.record.path,
        start_line: h.record.startLine,
        end_line: h.record.endLine,
        score: h.score,
        digest_verified: true,
      })),
    },
  )
}
