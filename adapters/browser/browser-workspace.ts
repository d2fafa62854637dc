import LightningFS from '@isomorphic-git/lightning-fs'
import { IsoagentError, type WorkspaceServices } from '../../src/index.ts'
import { chunkStream, listDir, readRange, statEntry, type BrowserFs } from './browser-entries.ts'
import { fromFsError } from './browser-errors.ts'
import { guardFor, serialised, shared } from './browser-guard.ts'
import { makeDir, put, removeEntry, renameEntry } from './browser-mutations.ts'

// The browser workspace: its options and wiring. Reads are in browser-entries.ts, writes and
// other mutations in browser-mutations.ts, the in-page locks in browser-guard.ts.

/** Options of {@link browserWorkspace}. */
export interface BrowserWorkspaceOptions {
  /**
   * Name of the file system: lightning-fs keeps it in the IndexedDB database of this name (and
   * its lock under `<name>_lock`). Workspaces with the same name see the same files, also after
   * a reload. Default `isoagent`.
   */
  name?: string
  /**
   * A lightning-fs instance to use instead of creating one. Pass the `name` it was created with,
   * so that the descriptor (and `resumeSession`) finds the same file system. `close()` then only
   * flushes it: the caller owns it.
   */
  fs?: LightningFS
  /** Chunk size of {@link WorkspaceServices.readStream} (default 1 MiB). */
  readChunkBytes?: number
}

/** The default file-system name. */
export const DEFAULT_BROWSER_WORKSPACE_NAME = 'isoagent'

/**
 * lightning-fs opens IndexedDB in the background as soon as it is constructed: without
 * `indexedDB` (or `navigator`) that is an uncaught ReferenceError, so refuse first.
 */
function requireBrowserStorage(): void {
  const host = globalThis as { indexedDB?: unknown; navigator?: unknown }
  const missing = [
    ...(typeof host.indexedDB === 'undefined' ? ['indexedDB'] : []),
    ...(typeof host.navigator === 'undefined' ? ['navigator'] : []),
  ]
  if (missing.length > 0) {
    throw new IsoagentError(
      'unsupported',
      `browserWorkspace needs IndexedDB, and this runtime has no ${missing.join(' and no ')} ` +
        '(plain Node.js has neither): use localWorkspace or memoryWorkspace here, or provide ' +
        'both globals (e.g. fake-indexeddb and a navigator object) first',
      { data: { missing } },
    )
  }
}

/**
 * A workspace in the browser's IndexedDB through lightning-fs (`@isomorphic-git/lightning-fs`),
 * the file system isomorphic-git uses; the workspace root is the file system's `/`. lightning-fs
 * needs `indexedDB` and `navigator` (it reads `navigator.locks` to pick its cross-tab mutex); in
 * Node provide both (fake-indexeddb and a plain `navigator` object) before using it: without them
 * (and without `options.fs`) it throws `IsoagentError` `unsupported` at once. This module touches
 * no Node global.
 *
 * - Writes go to a hidden temp file beside the target (`.<name>.<hex>.isoagent-tmp`, visible to
 *   `ls` while a write runs), then a rename moves it into place. A lightning-fs rename is a
 *   metadata move in its superblock (the directory tree, kept in memory and saved to IndexedDB as
 *   one value), so the swap is atomic in the page; the superblock is flushed before the old
 *   inode's data is deleted, so after a crash a file holds its old or its new bytes, never a mix
 *   (a crash in the last step can leave a hidden `.<name>.<hex>.isoagent-old` file beside it).
 *   Every write and every other mutation is durable when it returns. The price is one superblock
 *   save per mutation, which grows with the number of entries (measured in Chromium: about 5 ms
 *   per new file and 11 ms per overwrite with 2,000 files).
 * - Versions (`ino:mtime:size`) change on every write: each write lands as a new inode, numbered
 *   above every existing one, stamped with an mtime that strictly increases per file-system name
 *   in this page. (Others writing the same file system in place, such as isomorphic-git, keep the
 *   inode: their writes show through mtime, to the millisecond, and size only.)
 * - Preconditions (`ifVersion`, `ifAbsent`) are checked and applied under a lock per file-system
 *   name in this page: two concurrent edits in one page serialise, one wins, the other gets
 *   `version_conflict`. Across tabs no lock spans the check and the write (lightning-fs hands its
 *   whole file system from tab to tab only after 500 ms without operations, so interleaving is
 *   unlikely, but not excluded).
 * - Reads load the whole file: lightning-fs stores a file as one IndexedDB value, so ranged reads
 *   and streams slice it in memory.
 * - Symbolic links (lightning-fs has them; isomorphic-git creates them) are listed with kind
 *   `symlink` and never followed: reading, writing or listing through one is `unsupported`
 *   (`symlinks: false`; lightning-fs itself would follow links in every path it is given).
 * - A full quota (`QuotaExceededError`) is `io` ("storage quota exceeded") and leaves nothing
 *   behind. lightning-fs's own delayed superblock saves cannot be observed: a quota error there
 *   is an unhandled rejection, and the next flush of this workspace saves the tree again.
 * - `close()` saves the superblock and, for a file system the workspace created, releases
 *   lightning-fs's IndexedDB connection and cross-tab lock at once (through its internal
 *   `_deactivate`; without it, lightning-fs does so by itself after 500 ms idle). Operations
 *   after `close()` fail with `io`.
 */
export function browserWorkspace(options: BrowserWorkspaceOptions = {}): WorkspaceServices {
  const name = options.name ?? DEFAULT_BROWSER_WORKSPACE_NAME
  if (typeof name !== 'string' || name === '') {
    throw new IsoagentError('invalid_argument', 'browserWorkspace: name must be a non-empty string')
  }
  const owned = options.fs === undefined
  if (owned) requireBrowserStorage()
  const lfs = options.fs ?? new LightningFS(name)
  const b: BrowserFs = {
    name,
    fs: lfs.promises,
    guard: guardFor(name),
    chunkBytes: Math.max(1, options.readChunkBytes ?? 1024 * 1024),
  }
  const life = lifecycle(name)
  /** A read: refused after close, kept out of a file's swap. */
  const reading = <T>(run: () => Promise<T>) => life.op(() => shared(b.guard, run))
  /** A mutation: refused after close, one at a time per file-system name in this page. */
  const mutating = <T>(run: () => Promise<T>) => life.op(() => serialised(b.guard, run))
  return {
    capabilities: {
      read: true,
      write: true,
      exec: false,
      git: true,
      search: true,
      atomicRename: true,
      conditionalWrite: true,
      symlinks: false,
    },
    descriptor: { kind: 'browser', name },
    stat: (path) => reading(() => statEntry(b, path)),
    read: (path, range) => reading(() => readRange(b, path, range)),
    readStream: (path, range) =>
      life.op(async () =>
        chunkStream(await shared(b.guard, () => readRange(b, path, range)), b.chunkBytes),
      ),
    write: (path, data, writeOptions = {}) => mutating(() => put(b, path, data, writeOptions)),
    list: (path, listOptions = {}) => reading(() => listDir(b, path, listOptions)),
    mkdir: (path) => mutating(() => makeDir(b, path)),
    remove: (path, removeOptions = {}) => mutating(() => removeEntry(b, path, removeOptions)),
    rename: (from, to) => mutating(() => renameEntry(b, from, to)),
    close: () => life.close(() => closeFs(b, owned)),
  } satisfies WorkspaceServices
}

/**
 * The open/closed state of one workspace: operations run through `op` (refused after close,
 * counted), and `close` waits for those in flight before it runs `last` once.
 */
function lifecycle(name: string) {
  let closed = false
  let inflight = 0
  let settled: (() => void) | undefined
  return {
    async op<T>(run: () => Promise<T>): Promise<T> {
      if (closed) {
        throw new IsoagentError('io', `browser workspace ${JSON.stringify(name)} is closed`, {
          data: { name },
        })
      }
      inflight++
      try {
        return await run()
      } finally {
        if (--inflight === 0 && settled !== undefined) settled()
      }
    },
    async close(last: () => Promise<void>): Promise<void> {
      if (closed) return
      closed = true
      if (inflight > 0) await new Promise<void>((done) => (settled = done))
      await last()
    },
  }
}

/**
 * Save the superblock and, for a file system the workspace created (`owned`), release
 * lightning-fs's IndexedDB connection and cross-tab lock at once.
 */
function closeFs(b: BrowserFs, owned: boolean): Promise<void> {
  const { fs } = b
  return serialised(b.guard, async () => {
    try {
      // Waits for lightning-fs to be initialised and active, then saves its superblock.
      await fs.stat('/')
      await fs.flush()
    } catch (error) {
      throw fromFsError(error, '', 'close')
    }
    // lightning-fs has no public close: it releases its IndexedDB connection and its
    // cross-tab lock by itself after 500 ms without operations. A file system this
    // workspace created is deactivated now, so another workspace (or tab) with the same
    // name can take over at once and the database can be deleted.
    const deactivate = (fs as unknown as { _deactivate?: () => Promise<void> })._deactivate
    if (owned && typeof deactivate === 'function') await deactivate.call(fs)
  })
}
