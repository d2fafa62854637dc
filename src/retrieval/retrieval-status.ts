/** Where the index stands. */
export type RetrievalPhase = 'building' | 'ready' | 'degraded' | 'closed'

/** `session.retrievalStatus()`: the index's progress and size. */
export interface RetrievalStatus {
  phase: RetrievalPhase
  /** Files found eligible so far (name, size and content rules). */
  eligibleFiles: number
  indexedFiles: number
  indexedChunks: number
  /** indexedFiles / eligibleFiles in basis points (10000 = all). */
  coverageBps: number
  /** Files waiting to be (re-)embedded or being embedded. */
  queueDepth: number
  failedFiles: number
  vectorRecords: number
  /** Bytes of the contiguous vector buffer. */
  vectorBytes: number
  /** The embedder: provider, model and vector dimension. */
  model: { provider: string; model: string; dimension: number }
}
