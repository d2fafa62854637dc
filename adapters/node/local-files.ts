import type { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import type { ByteIndex, ByteRange, ListOptions } from '../../src/workspace/workspace-services.ts'
import { dirHints, seedDirs, type DirHint } from './local-dir-cache.ts'
import { listSync, stampedDevice } from './local-listing.ts'
import { readNow, readRange, readStream, stat, statReal } from './local-read.ts'
import { resolve, resolveEntry, type LocalRoot } from './local-resolve.ts'

// Path resolution and reads of the local workspace: what its search workers load, without the
// shell, git and write machinery. The operations live by concern in local-resolve.ts,
// local-dir-cache.ts, local-open.ts, local-read.ts and local-listing.ts; this file wires them.

export { fromErrno } from './local-errno.ts'
export { DIR_CACHE_MAX, DIR_CACHE_MS, type DirHint } from './local-dir-cache.ts'
export { listingOf, listingPage, listings, reapSideFiles } from './local-listing.ts'
export { SYNC_READ_INTO_MAX_BYTES, SYNC_READ_MAX_BYTES, versionOf } from './local-read.ts'

const bufferIndexOf = Buffer.prototype.indexOf
/**
 * How the search finds byte values in local files (grep's literal search among them): Node's
 * `Buffer.prototype.indexOf`, which is memchr: same answers, an order of magnitude faster.
 */
export const MEMCHR_INDEX: ByteIndex = {
  indexOf: (bytes, byte, from) => bufferIndexOf.call(bytes, byte, from),
  nsPerByte: 0.02,
}

/** Options of {@link localFiles}. */
export interface LocalFilesOptions {
  /** Serve resolution, stat and small reads with synchronous calls (`syncMetadata`). */
  syncIo: boolean
  /** Chunk size of streamed reads. */
  chunkBytes: number
  /** Reuse unchanged directories' listings (see listing-cache.ts); default true. */
  listingCache?: boolean
}

/**
 * Containment-checked resolution and reads below `realRoot` (a real path): the read side of a
 * local workspace, shared by the workspace and its search workers.
 */
export function localFiles(realRoot: string, options: LocalFilesOptions) {
  const root: LocalRoot = {
    realRoot,
    syncIo: options.syncIo,
    chunkBytes: options.chunkBytes,
    device: options.listingCache === false ? undefined : stampedDevice(realRoot),
    dirCache: new Map(),
  }
  return {
    listSync: (path: WorkspacePath, listOptions?: ListOptions) => listSync(root, path, listOptions),
    resolve: (path: WorkspacePath) => resolve(root, path),
    dirHints: (dirs: readonly WorkspacePath[]) => dirHints(root, dirs),
    seedDirs: (hints: readonly DirHint[]) => seedDirs(root, hints),
    resolveEntry: (path: WorkspacePath) => resolveEntry(root, path),
    stat: (path: WorkspacePath) => stat(root, path),
    statReal: (real: string, path: WorkspacePath) => statReal(root, real, path),
    readNow: (path: WorkspacePath, range?: ByteRange, into?: Uint8Array) =>
      readNow(root, path, range, into),
    readRange: (path: WorkspacePath, range?: ByteRange) => readRange(root, path, range),
    readStream: (path: WorkspacePath, range?: ByteRange) => readStream(root, path, range),
    byteIndex: MEMCHR_INDEX,
  }
}
