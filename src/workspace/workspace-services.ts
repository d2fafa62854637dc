import type { WorkspaceCapabilities } from './capabilities.ts'
import type { FileScanner } from './file-scanner.ts'
import type { Shell } from './shell.ts'
import type { TempFiles } from './temp-files.ts'
import type { GitBackend } from './git-backend.ts'
import type { WorkspacePath } from './workspace-path.ts'

/** Kind of a directory entry. */
export type EntryKind = 'file' | 'directory' | 'symlink' | 'other'

/** Facts about one entry. */
export interface WorkspaceStat {
  path: WorkspacePath
  kind: EntryKind
  /** Size in bytes (0 for directories). */
  size: number
  mtimeMs?: number
  /** POSIX mode bits, where the backend has them. */
  mode?: number
  /**
   * Opaque version tag that changes whenever the content changes (an ETag, a counter, or
   * mtime+size+inode). Used as a write precondition.
   */
  version: string
}

/** One entry of a directory listing. */
export interface DirEntry {
  readonly name: string
  readonly kind: EntryKind
  readonly size?: number
}

/** Options for {@link WorkspaceServices.list}. */
export interface ListOptions {
  /** Return only names sorting strictly after this one (lexical, by UTF-16 code units). */
  after?: string
  /** At most this many entries. */
  limit?: number
  signal?: AbortSignal
}

/** A page of a directory listing, sorted by name. */
export interface ListPage {
  /** The page's entries: the array is the caller's own; entries may be shared (and frozen). */
  entries: DirEntry[]
  /** Present when more entries follow: pass it as `after` to continue. */
  next?: string
}

/** A byte range of a file: `length` bytes from `offset`, clipped to the file. */
export interface ByteRange {
  offset?: number
  length?: number
}

/**
 * Condition checked by the backend immediately before a write lands. A failed condition throws
 * an `IsoagentError` with code `version_conflict` and changes nothing.
 */
export interface WritePrecondition {
  /** The file must exist with exactly this {@link WorkspaceStat.version}. */
  ifVersion?: string
  /** The file must not exist. */
  ifAbsent?: boolean
}

/** Options for {@link WorkspaceServices.write}. */
export interface WriteOptions {
  precondition?: WritePrecondition
  /** Create missing parent directories (default true). */
  createParents?: boolean
  /**
   * Flush the bytes and the write itself to stable storage before resolving, where the backend
   * can (the local disk: fsync of the file, then of its directory after the rename). Backends
   * whose acknowledged writes are already durable (S3, R2) or that cannot flush (memory,
   * IndexedDB) ignore it.
   */
  durable?: boolean
  signal?: AbortSignal
}

/** Options for {@link WorkspaceServices.append}. */
export interface AppendOptions {
  /** Checked against the file before the bytes are added (`ifAbsent`: the append creates it). */
  precondition?: WritePrecondition
  /** Create missing parent directories (default true). */
  createParents?: boolean
  /**
   * Flush the added bytes to stable storage before resolving (the local disk: fsync of the
   * file; of its directory too when the append created the file).
   */
  durable?: boolean
  signal?: AbortSignal
}

/** Outcome of a write. */
export interface WriteOutcome {
  created: boolean
  version: string
}

/**
 * How to find one byte value in bytes: the answers of `Uint8Array.prototype.indexOf`, at a
 * platform's speed (Node's `Buffer.prototype.indexOf` is `memchr`: about 0.02 ns a byte where a
 * typed array's takes 0.3).
 */
export interface ByteIndex {
  /** The first offset at or after `from` (≥ 0) holding `byte`, or -1. */
  indexOf(bytes: Uint8Array, byte: number, from: number): number
  /** Its cost in ns per byte passed over, by which a search picks how it looks for a literal. */
  nsPerByte: number
}

/** How a workspace can be rebuilt when a session is resumed elsewhere. */
export type WorkspaceDescriptor =
  | { kind: 'memory' }
  | { kind: 'local'; root: string }
  | { kind: 's3'; bucket: string; prefix: string }
  /** An R2 bucket binding (by its name in the Worker's env) and key prefix. */
  | { kind: 'r2'; binding: string; prefix: string }
  | { kind: 'browser'; name: string }

/**
 * The workspace port: the only door between the core and a storage backend. Paths are always
 * {@link WorkspacePath}s, already normalised and contained; adapters additionally enforce
 * containment at open time where the backend can escape it (symlinks on disk).
 *
 * Errors are `IsoagentError`s with codes `not_found`, `is_directory`, `not_directory`,
 * `version_conflict`, `path_escape`, `permission_denied`, `too_large` or `io`.
 */
export interface WorkspaceServices {
  readonly capabilities: WorkspaceCapabilities
  readonly descriptor: WorkspaceDescriptor
  /** Facts about a path, or `undefined` when nothing is there. Symlinks inside the root are followed. */
  stat(path: WorkspacePath): Promise<WorkspaceStat | undefined>
  /** Bytes of a file (all of it, or a range). */
  read(path: WorkspacePath, range?: ByteRange): Promise<Uint8Array>
  /**
   * The same bytes as {@link WorkspaceServices.read}, served at once where the backend can (a
   * local disk, memory), or undefined where it cannot serve this read at once (too large, say):
   * callers then use `read`. Throws what `read` rejects with. A search reads tens of thousands
   * of small files; not waiting for each is a large part of its speed. A wrapper that changes
   * what `read` gives must change this too, or leave it out.
   *
   * `into` is the caller's scratch space: when the bytes fit, the backend may read them into it
   * and return a view of it, so a search does not allocate (and the garbage collector free) a
   * buffer per file. The caller is then done with them before it passes `into` again. A backend
   * may serve larger reads at once only into a buffer given (the local disk: 1 MiB without one,
   * up to the buffer's size, at most 16 MiB, into one).
   */
  readNow?(path: WorkspacePath, range?: ByteRange, into?: Uint8Array): Uint8Array | undefined
  /** The bytes of a file as a stream of chunks, for files too large to hold at once. */
  readStream(path: WorkspacePath, range?: ByteRange): Promise<ReadableStream<Uint8Array>>
  /** Replace (or create) a file with `data`, atomically where `capabilities.atomicRename`. */
  write(path: WorkspacePath, data: Uint8Array, options?: WriteOptions): Promise<WriteOutcome>
  /**
   * Add `data` at the end of a file (creating it when missing) without rewriting what it holds,
   * where the backend can (the local disk); without it, callers rewrite the file with `write`.
   * The precondition is checked and the bytes added as one step against other writers (the
   * local disk: under the file's write lock). What the file held before is never changed, but a crash during an append may leave only a prefix of
   * `data` at its end: callers that need whole records end each with a delimiter and ignore a
   * torn last one. Resolves with the file's new version.
   */
  append?(path: WorkspacePath, data: Uint8Array, options?: AppendOptions): Promise<WriteOutcome>
  /** One page of a directory's entries, sorted by name. */
  list(path: WorkspacePath, options?: ListOptions): Promise<ListPage>
  /**
   * The same page as {@link WorkspaceServices.list}, served at once where the backend can (a
   * local disk, memory), or undefined where it cannot serve this listing at once: callers then
   * use `list`. Throws what `list` rejects with. A search lists thousands of directories; not
   * waiting for each lets its walk run without a pause. A wrapper that changes what `list` gives
   * must change this too, or leave it out.
   */
  listNow?(path: WorkspacePath, options?: ListOptions): ListPage | undefined
  /** Create a directory (and its parents). Existing directories are fine. */
  mkdir(path: WorkspacePath): Promise<void>
  /** Remove a file, or a directory with `recursive`. */
  remove(path: WorkspacePath, options?: { recursive?: boolean }): Promise<void>
  /** Move a file or directory. */
  rename(from: WorkspacePath, to: WorkspacePath): Promise<void>
  /** Runs commands (`bash`); present exactly when `capabilities.exec` is true. */
  readonly shell?: Shell
  /**
   * The workspace's own git backend (the git CLI on local disk). When absent and
   * `capabilities.git` is true, the `git` tool runs isomorphic-git over this port.
   */
  readonly gitFs?: GitBackend
  /** Scans files for grep on other threads; the search tool scans on its own without one. */
  readonly scanner?: FileScanner
  /**
   * How the search finds byte values in this workspace's files (the local disk: Node's
   * `memchr`); without one, `Uint8Array.prototype.indexOf`. It must give the same answers.
   */
  readonly byteIndex?: ByteIndex
  /**
   * Temp files written in place beside a target and promoted atomically (`download`); present
   * on workspaces with a writable `capabilities.localRoot`.
   */
  readonly tempFiles?: TempFiles
  /** Release backend resources. */
  close?(): Promise<void>
}
