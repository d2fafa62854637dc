import type { IsoagentErrorCode } from '../errors.ts'
import type { WorkspacePath } from './workspace-path.ts'

/** One printed line of a content-mode grep result. */
export interface ScanRecord {
  /** 1-based line number. */
  line: number
  text: string
  match: boolean
}

/** What grep found in one file. */
export interface ScanResult {
  binary: boolean
  /** Matching lines seen (all of them unless the scan stopped early). */
  matches: number
  records: ScanRecord[]
  /** Line of the last kept match (0 if none). */
  lastMatchLine: number
  /** Last line printed, match or context (for the next page's dedupe). */
  shownThrough: number
  /** Content mode: more matching lines follow the kept ones. */
  more: boolean
  /** The file has a line over the line-length cap and was skipped. */
  lineTooLong?: boolean
}

/** What a grep looks for in every file: plain data, so it can cross to another thread. */
export interface FileScanJob {
  /** The grep pattern, compiled by the scanner exactly as the search tool compiles it. */
  pattern: string
  caseSensitive: boolean
  /** `content` mode: keep matching (and context) lines; the other modes only count. */
  keepText: boolean
  /** Stop at a file's first match (`files_with_matches`). */
  firstOnly: boolean
  /** Context lines before and after each match (content mode). */
  context: number
  /** Content mode: keep at most this many matching lines per file. */
  maxMatches: number
}

/** One file's outcome: its result, or the error its scan raised (as `IsoagentError.toJSON`). */
export type FileScanOutcome =
  | { result: ScanResult }
  | { error: { code: IsoagentErrorCode; message: string; data: Record<string, unknown> } }

/** Directories a grep hands over whole: the scanner walks them (as the search's walk would) and scans their files. */
export interface TreeScanRequest {
  /** The directories, in walk order: ones the search's walk decided to enter. */
  dirs: WorkspacePath[]
  /** Where the search started (`include` is relative to it). */
  start: WorkspacePath
  /** The search's `include` glob. */
  include?: string
  /** Keep the backend's listing order (`sort: "backend"`). */
  backendOrder: boolean
  /**
   * Identifies the search: scans of one search share the ignore rules of the directories above
   * their `dir`, read once.
   */
  walkId: string
  /** In the first directory, only the files after this one (walk order): the rest of a directory that stopped early. */
  after?: WorkspacePath
  /**
   * Stop after the file that brings the matching lines found to this many (content mode, whose
   * results hold text); the outcome then says where to resume.
   */
  stopAfterMatches?: number
}

/** Every file of one directory of a {@link TreeScanRequest} in walk order with its outcome, and what the walk skipped. */
export interface TreeScanOutcome {
  /**
   * The directories' files in walk order. An entry with `files` stands for that many files: a
   * scanner may fold a run of files that hold no match (no error, not binary, no line too long)
   * into the run's last file, whose outcome it keeps, and keep only the count of the others.
   */
  files: { path: WorkspacePath; outcome: FileScanOutcome; files?: number }[]
  skips: { unreadable_dirs: number; unreadable_ignore_files: number }
  /**
   * Set when the scan stopped at `stopAfterMatches` in this directory: the last file scanned.
   * The directories after it were not scanned and have no outcome.
   */
  resumeAfter?: WorkspacePath
}

/** Directories a glob hands over whole: the scanner walks them and matches their files. */
export interface TreeListRequest {
  /** The directories, in walk order: ones the search's walk decided to enter. */
  dirs: WorkspacePath[]
  /** Where the search started (`query` and `include` are relative to it). */
  start: WorkspacePath
  /** The glob files must match (the search's `query`). */
  query: string
  /** The search's `include` glob. */
  include?: string
  /** Keep the backend's listing order (`sort: "backend"`). */
  backendOrder: boolean
  /** As in {@link TreeScanRequest.walkId}. */
  walkId: string
}

/** The matching files of one directory of a {@link TreeListRequest} in walk order, and what the walk saw. */
export interface TreeListOutcome {
  files: WorkspacePath[]
  /** Files walked, matching or not. */
  walked: number
  skips: { unreadable_dirs: number; unreadable_ignore_files: number }
}

/**
 * Scans workspace files for grep, and walks directories for glob, on other threads (Node's worker
 * threads on local disk). It is optional: the search tool does the work on its own thread when a
 * workspace has none, and it must give exactly what the search tool's own scan and walk give.
 */
export interface FileScanner {
  /**
   * Threads ready to take work now: 0 until {@link FileScanner.start} has brought them up, and
   * when they cannot run. The search tool hands work over only while this is at least 1.
   */
  readonly threads: number
  /** Bring the threads up if they are not running (returns at once; they start meanwhile). */
  start(): void
  /**
   * Scan `paths` for `job`, one outcome per path in the same order. Rejects when the scanner
   * itself fails (a thread died), or with `cancelled` when `signal` aborts; the caller then
   * scans the files itself or stops.
   */
  scan(
    job: FileScanJob,
    paths: readonly WorkspacePath[],
    signal?: AbortSignal,
  ): Promise<FileScanOutcome[]>
  /**
   * Walk each of `tree.dirs` and scan its files for `job`, as the search tool's own walk and scan
   * would: one outcome per directory, in order (fewer when `stopAfterMatches` stopped the scan);
   * rejects like {@link FileScanner.scan}.
   */
  scanTree(
    job: FileScanJob,
    tree: TreeScanRequest,
    signal?: AbortSignal,
  ): Promise<TreeScanOutcome[]>
  /**
   * Walk each of `tree.dirs` as the search tool's walk would and return the files that match the
   * glob, one outcome per directory in the same order; rejects like {@link FileScanner.scan}.
   */
  listTree(tree: TreeListRequest, signal?: AbortSignal): Promise<TreeListOutcome[]>
  /**
   * How long (ms) a glob walks on its own thread before it hands directories to
   * {@link FileScanner.listTree} (default 40; and not before it has walked 50,000 files, see
   * `WALK_HERE_FILES`). Listing a directory where the walk runs costs a few microseconds and a
   * round trip to a thread more, so only a long walk gains from the threads; a scanner whose
   * round trips cost nothing may say 0, which hands directories over at once.
   */
  readonly listAfterMs?: number
}
