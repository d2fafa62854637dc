import type { WorkspacePath } from './workspace-path.ts'

/** How {@link TempFile.writeBody} reports to its caller as a body streams in. */
export interface BodyProgress {
  /**
   * Called with each chunk's size before it is written. Throwing stops the body: that chunk and
   * any after it are never written, and `writeBody` rejects with the thrown error.
   */
  admit(bytes: number): void
  /** Called as writes complete, in order, with the bytes just written from the start position. */
  written(bytes: number): void
}

/**
 * A new file being written beside its target, for content too large to hold in memory
 * (`download`). Writes at disjoint positions may run at once. Nothing of it is visible at the
 * target until {@link TempFile.promote}; {@link TempFile.discard} leaves nothing behind.
 */
export interface TempFile {
  /** Write `chunks`, one after the other, from byte `position` (one `pwritev` on disk). */
  write(chunks: readonly Uint8Array[], position: number): Promise<void>
  /**
   * SHA-256 (lower-case hex) of the file's bytes from 0 to `length`. The backend hashes bytes
   * written in order as they arrive and reads back only what came out of order.
   */
  sha256(length: number): Promise<string>
  /**
   * Optional fast path: stream `body` into the file from `position` without the Web stream
   * between socket and disk (the local-disk adapter takes bodies of the Node HTTP transport).
   * Returns undefined, leaving `body` untouched, when it cannot take this body; the caller then
   * reads it and calls {@link TempFile.write}. The promise settles once every write has; it
   * rejects with {@link BodyProgress.admit}'s error, a write's error or the body's own error
   * (after writing what was admitted), and the body is then cancelled.
   */
  writeBody?(
    body: ReadableStream<Uint8Array>,
    position: number,
    progress: BodyProgress,
  ): Promise<void> | undefined
  /** Flush the content to stable storage (fsync). */
  sync(): Promise<void>
  /**
   * Move the file onto its target in one step and close it. Without `overwrite` an existing
   * target is never replaced (`already_exists`); a directory there fails (`is_directory`).
   */
  promote(options: { overwrite: boolean }): Promise<{ overwritten: boolean }>
  /** Close and delete the file; idempotent, never rejects. */
  discard(): Promise<void>
}

/**
 * Temp files beside workspace paths: an optional service of workspaces on a local disk
 * (`capabilities.localRoot`), implemented by the local-disk adapter (adapters/node).
 */
export interface TempFiles {
  /**
   * Create an empty temp file in `target`'s directory (made if missing), contained like every
   * workspace path. Rejects with `is_directory` when `target` is a directory.
   */
  create(target: WorkspacePath): Promise<TempFile>
}
