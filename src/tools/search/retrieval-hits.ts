import { IsoagentError } from '../../errors.ts'
import type { ToolContext } from '../../kernel/tool-spec.ts'
import { contentDigest } from '../../retrieval/chunker.ts'
import type { ChunkRecord } from '../../retrieval/vector-index.ts'
import type { WorkspaceRetrieval } from '../../retrieval/workspace-retrieval.ts'
import { WorkspacePath } from '../../workspace/workspace-path.ts'
import { compilePathGlob } from './walk/path-filter.ts'
import type { SearchArgs } from './search-args.ts'

/** Limits of the `semantic` and `hybrid` modes. */
export const RETRIEVAL_QUERY_LIMITS = {
  maxQueryBytes: 2048,
  defaultLimit: 10,
  maxLimit: 25,
} as const

const LINES_SHOWN = 16
const MAX_LINE_CHARS = 2000
const decoder = new TextDecoder('utf-8')
const encoder = new TextEncoder()

/** The arguments semantic and hybrid accept, checked; and the path filter they imply. */
export function retrievalArgs(
  args: SearchArgs,
  context: ToolContext,
): { limit: number; keep: (r: ChunkRecord) => boolean } {
  const mode = args.mode
  for (const key of ['context', 'case_sensitive', 'output_mode', 'sort', 'cursor'] as const)
    if (args[key] !== undefined)
      throw new IsoagentError('invalid_argument', `${key} does not apply to ${mode} mode`)
  const bytes = encoder.encode(args.query).length
  if (bytes > RETRIEVAL_QUERY_LIMITS.maxQueryBytes)
    throw new IsoagentError(
      'invalid_argument',
      `the ${mode} query is ${bytes} bytes; at most ${RETRIEVAL_QUERY_LIMITS.maxQueryBytes}`,
    )
  if (args.query.trim() === '')
    throw new IsoagentError('invalid_argument', `the ${mode} query is empty`)
  const limit = args.limit ?? RETRIEVAL_QUERY_LIMITS.defaultLimit
  if (!Number.isInteger(limit) || limit < 1 || limit > RETRIEVAL_QUERY_LIMITS.maxLimit)
    throw new IsoagentError(
      'invalid_argument',
      `${mode} limit must be 1..${RETRIEVAL_QUERY_LIMITS.maxLimit}`,
    )
  const start = context.path(args.path ?? '.')
  const include =
    args.include === undefined ? undefined : compilePathGlob(args.include, 'include', start)
  const keep = (r: ChunkRecord): boolean =>
    (start === '' || r.path === start || r.path.startsWith(`${start}/`)) &&
    (include === undefined || include(r.path))
  return { limit, keep }
}

/**
 * Re-reads hits' files (once each per call) and says whether a chunk still stands: the file's
 * digest and the chunk's bytes unchanged. A stale chunk's file is re-queued.
 */
export class HitVerifier {
  private readonly files = new Map<
    string,
    Promise<{ digest: string; bytes: Uint8Array } | undefined>
  >()
  stale = 0

  constructor(
    private readonly context: ToolContext,
    private readonly retrieval: WorkspaceRetrieval,
  ) {}

  async verify(record: ChunkRecord): Promise<boolean> {
    let file = this.files.get(record.path)
    if (file === undefined) {
      file = this.load(record.path)
      this.files.set(record.path, file)
    }
    const now = await file
    const ok =
      now !== undefined &&
      now.digest === record.digest &&
      decoder.decode(now.bytes.subarray(record.startByte, record.endByte)) === record.text
    if (!ok) {
      this.stale++
      this.retrieval.requeue(record.path as WorkspacePath)
    }
    return ok
  }

  private async load(path: string): Promise<{ digest: string; bytes: Uint8Array } | undefined> {
    try {
      const bytes = await this.context.workspace.read(path as WorkspacePath)
      return { digest: await contentDigest(bytes), bytes }
    } catch {
      return undefined
    }
  }
}

/** Up to 16 numbered lines of a chunk, as `read` renders them. */
export function renderChunkLines(record: ChunkRecord): string[] {
  const lines = record.text.replace(/\r?\n$/, '').split(/\r?\n/)
  return lines.slice(0, LINES_SHOWN).map((line, i) => {
    const text =
      line.length > MAX_LINE_CHARS
        ? `${line.slice(0, MAX_LINE_CHARS)} … (line truncated at ${MAX_LINE_CHARS} characters)`
        : line
    return `${String(record.startLine + i).padStart(6)}\t${text}`
  })
}

/** The metadata `status` and `fallback` of a retrieval answer. */
export function retrievalState(
  retrieval: WorkspaceRetrieval,
  stale: number,
): { status: ReturnType<WorkspaceRetrieval['status']>; fallback: string | null } {
  const status = retrieval.status()
  const fallback =
    stale > 0 ? 'filtered_stale_hits' : status.phase === 'building' ? 'building' : null
  return { status, fallback }
}

/** The source anchors of hits. */
export function anchorsOf(
  records: readonly ChunkRecord[],
): { path: string; start_line: number; end_line: number }[] {
  return records.map((r) => ({ path: r.path, start_line: r.startLine, end_line: r.endLine }))
}
