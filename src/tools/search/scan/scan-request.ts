import type { WorkspaceServices } from '../../../workspace/workspace-services.ts'
import type { LineMatcher } from './line-matcher.ts'

// What the scans of scan-file.ts and scan-bytes.ts are given: the request, and the reader.

/** The part of a workspace a scan reads through, and how it finds byte values in it. */
export type FileReader = Pick<WorkspaceServices, 'read' | 'readStream' | 'readNow' | 'byteIndex'>

/** What to look for in one file. */
export interface ScanRequest {
  matcher: LineMatcher
  /** `content` keeps matching (and context) lines; the others only count. */
  keepText: boolean
  /** Stop at the first match (files_with_matches). */
  firstOnly: boolean
  /** Context lines before and after each match (content mode). */
  context: number
  /** Resume: ignore matches on lines ≤ this. */
  afterLine: number
  /** Resume: never print lines ≤ this again. */
  shownThrough: number
  /** Content mode: keep at most this many matching lines; `more` says if another follows. */
  maxMatches: number
}
