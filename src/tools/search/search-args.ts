/** Page sizes: paged modes (grep, glob) and ranked mode (bm25). */
export const SEARCH_LIMITS = {
  paged: { default: 200, max: 1000 },
  ranked: { default: 10, max: 25 },
  maxContext: 8,
} as const

/** What a grep prints: matching lines, file names, counts per file, or one summary line. */
export type OutputMode = 'content' | 'files_with_matches' | 'count' | 'summary'

/** The arguments of the `search` tool (its JSON schema is in search.ts). */
export interface SearchArgs {
  /** `semantic` and `hybrid` only where the session enabled retrieval. */
  mode: 'grep' | 'glob' | 'bm25' | 'semantic' | 'hybrid'
  query: string
  path?: string
  include?: string
  context?: number
  case_sensitive?: boolean
  output_mode?: OutputMode
  limit?: number
  cursor?: string
  sort?: 'path' | 'backend'
}
