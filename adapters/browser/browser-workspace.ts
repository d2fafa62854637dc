import LightningFS from '@isomorphic-git/lightning-fs'
import {
  checkPrecondition,
  pageOfNames,
  IsoagentError,
  WorkspacePath,
  type ByteRange,
  type DirEntry,
  type EntryKind,
  type IsoagentErrorCode,
  type ListOptions,
  type ListPage,
  type WorkspaceServices,
  type WorkspaceStat,
  type WriteOptions,
  type WriteOutcome,
} from '../../src/index.ts'
import {
  clipRange,
  isDirectoryError as isDirectory,
  notFoundError as notFound,
} from '../../src/workspace/adapter-kit.ts'

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

type Promised = LightningFS['promises']

/** What lightning-fs's `stat`/`lstat` really return (its typings omit `symlink`). */
interface LfsStat {
  type: 'file' | 'dir' | 'symlink'
  mode: number
  size: number
  ino: number
  mtimeMs: number
}

const ERRNO: Record<string, IsoagentErrorCode> = {
  ENOENT: 'not_found',
  EEXIST: 'already_exists',
  ENOTDIR: 'not_directory',
  EISDIR: 'is_directory',
  ENOTEMPTY: 'not_empty',
}

const show = (path: string) => WorkspacePath.display(path as WorkspacePath)

/** IndexedDB refused to store more for this origin (Chromium/WebKit name, then Firefox's). */
function isQuotaError(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name
  return name === 'QuotaExceededError' || name === 'NS_ERROR_DOM_QUOTA_REACHED'
}

function quotaError(path: string, op: string, cause: unknown): IsoagentError {
  return new IsoagentError(
    'io',
    `storage quota exceeded: the browser refused to store more data while trying to ${op} ${show(path)}; nothing was written (free space in this origin's storage or write less)`,
    { data: { path, reason: 'quota_exceeded' }, cause },
  )
}

/** A lightning-fs (or IndexedDB) failure as an IsoagentError. */
function fromFsError(error: unknown, path: string, op: string): IsoagentError {
  if (error instanceof IsoagentError) return error
  if (isQuotaError(error)) return quotaError(path, op, error)
  const code = String((error as { code?: unknown } | null)?.code ?? '')
  const mapped = ERRNO[code] ?? 'io'
  const message =
    mapped === 'not_found'
      ? `not found: ${show(path)}`
      : mapped === 'io'
        ? `${op} ${show(path)} failed: ${code || (error instanceof Error ? error.message : String(error))}`
        : `${op} ${show(path)}: ${mapped.replace('_', ' ')}`
  return new IsoagentError(mapped, message, { data: { path, errno: code || null }, cause: error })
}

const notDirectory = (path: string, at: string) =>
  new IsoagentError('not_directory', `${show(at)} is a file, not a directory`, {
    data: { path, at },
  })
const throughSymlink = (path: string, at: string) =>
  new IsoagentError(
    'unsupported',
    at === path
      ? `${show(path)} is a symbolic link; browser workspaces do not follow symlinks`
      : `${show(path)} goes through the symbolic link ${show(at)}; browser workspaces do not follow symlinks`,
    { data: { path, symlink: at } },
  )

function kindOf(stat: LfsStat): EntryKind {
  return stat.type === 'file'
    ? 'file'
    : stat.type === 'dir'
      ? 'directory'
      : stat.type === 'symlink'
        ? 'symlink'
        : 'other'
}

/**
 * Content-independent version of an entry. Every write lands as a new inode (temp file +
 * rename; lightning-fs numbers a new inode above every existing one) stamped with an mtime that
 * strictly increases per file-system name in this page, so it changes on every write.
 */
function versionOf(stat: LfsStat): string {
  if (stat.type === 'dir') return `d:${stat.ino}`
  return `${stat.type === 'file' ? 'f' : 'l'}:${stat.ino}:${stat.mtimeMs}:${stat.size}`
}

/**
 * Per file-system name, in this JavaScript realm: a mutex serialising every mutation (so write
 * preconditions are checked and applied without another in-page write in between) and a
 * readers/writer gate that keeps reads out of the short moment a replaced file is swapped in.
 */
interface Guard {
  tail: Promise<unknown>
  readers: number
  swapping: Promise<void> | undefined
  drained: (() => void) | undefined
  lastStamp: number
}

const guards = new Map<string, Guard>()

function guardFor(name: string): Guard {
  let guard = guards.get(name)
  if (guard === undefined) {
    guard = {
      tail: Promise.resolve(),
      readers: 0,
      swapping: undefined,
      drained: undefined,
      lastStamp: 0,
    }
    guards.set(name, guard)
  }
  return guard
}

function serialised<T>(guard: Guard, run: () => Promise<T>): Promise<T> {
  const result = guard.tail.then(run, run)
  guard.tail = result.catch(() => undefined)
  return result
}

async function shared<T>(guard: Guard, run: () => Promise<T>): Promise<T> {
  while (guard.swapping !== undefined) await guard.swapping
  guard.readers++
  try {
    return await run()
  } finally {
    if (--guard.readers === 0 && guard.drained !== undefined) {
      const drained = guard.drained
      guard.drained = undefined
      drained()
    }
  }
}

/** Runs `run` with no reader inside. Only called under {@link serialised}: one at a time. */
async function exclusive<T>(guard: Guard, run: () => Promise<T>): Promise<T> {
  let release!: () => void
  guard.swapping = new Promise<void>((done) => (release = done))
  try {
    while (guard.readers > 0) await new Promise<void>((done) => (guard.drained = done))
    return await run()
  } finally {
    guard.swapping = undefined
    release()
  }
}

function randomTag(): string {
  const bytes = new Uint8Array(6)
  crypto.getRandomValues(bytes)
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

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
  const fs: Promised = lfs.promises
  const chunkBytes = Math.max(1, options.readChunkBytes ?? 1024 * 1024)
  const guard = guardFor(name)

  let closed = false
  let inflight = 0
  let settled: (() => void) | undefined

  /** Runs a port operation: refused after close, counted so close can wait for it. */
  async function op<T>(run: () => Promise<T>): Promise<T> {
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
  }

  const abs = (path: string) => '/' + path

  async function lstat(path: string): Promise<LfsStat | undefined> {
    try {
      return (await fs.lstat(abs(path))) as unknown as LfsStat
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code === 'ENOENT') return undefined
      throw fromFsError(error, path, 'stat')
    }
  }

  /**
   * Walks the ancestors of `path` without following anything: what the first one that is not a
   * directory is, if any.
   */
  async function probeAncestors(
    path: WorkspacePath,
  ): Promise<{ kind: 'ok' } | { kind: 'missing' | 'file' | 'symlink'; at: string }> {
    const segments = path === '' ? [] : path.split('/')
    let prefix = ''
    for (let i = 0; i < segments.length - 1; i++) {
      prefix = prefix === '' ? segments[i]! : `${prefix}/${segments[i]}`
      const stat = await lstat(prefix)
      if (stat === undefined) return { kind: 'missing', at: prefix }
      if (stat.type === 'symlink') return { kind: 'symlink', at: prefix }
      if (stat.type !== 'dir') return { kind: 'file', at: prefix }
    }
    return { kind: 'ok' }
  }

  /** The entry at `path` itself (not followed), or undefined; throws for symlinked ancestors. */
  async function entry(
    path: WorkspacePath,
    throughFile: 'undefined' | 'throw',
  ): Promise<LfsStat | undefined> {
    const probe = await probeAncestors(path)
    if (probe.kind === 'symlink') throw throughSymlink(path, probe.at)
    if (probe.kind === 'file' && throughFile === 'throw') throw notDirectory(path, probe.at)
    if (probe.kind !== 'ok') return undefined
    return lstat(path)
  }

  async function readWhole(path: WorkspacePath): Promise<Uint8Array> {
    const stat = await entry(path, 'throw')
    if (stat === undefined) throw notFound(path)
    if (stat.type === 'dir') throw isDirectory(path)
    if (stat.type === 'symlink') throw throughSymlink(path, path)
    let data: Uint8Array | undefined
    try {
      data = (await fs.readFile(abs(path))) as Uint8Array | undefined
    } catch (error) {
      throw fromFsError(error, path, 'read')
    }
    if (!(data instanceof Uint8Array)) {
      if (data === undefined || data === null) {
        throw new IsoagentError(
          'io',
          `read ${show(path)} failed: its data is missing from IndexedDB (a write or removal was interrupted)`,
          { data: { path } },
        )
      }
      data = new Uint8Array(data as ArrayBufferLike)
    }
    // A fresh view: lightning-fs hangs an own `toString` on the array it returns.
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  }

  function clip(data: Uint8Array, range: ByteRange | undefined): Uint8Array {
    if (range === undefined || (range.offset === undefined && range.length === undefined))
      return data
    return data.slice(...clipRange(range, data.length))
  }

  /** `mkdir -p`; returns the directories it created, outermost first. Serialised callers only. */
  async function makeDirs(path: WorkspacePath): Promise<string[]> {
    const segments = path === '' ? [] : path.split('/')
    const created: string[] = []
    let prefix = ''
    for (const segment of segments) {
      prefix = prefix === '' ? segment : `${prefix}/${segment}`
      const stat = await lstat(prefix)
      if (stat === undefined) {
        try {
          await fs.mkdir(abs(prefix))
        } catch (error) {
          throw fromFsError(error, prefix, 'mkdir')
        }
        created.push(prefix)
      } else if (stat.type === 'symlink') throw throughSymlink(path, prefix)
      else if (stat.type !== 'dir') throw notDirectory(path, prefix)
    }
    return created
  }

  async function flush(path: string, op: string): Promise<void> {
    try {
      await fs.flush()
    } catch (error) {
      throw fromFsError(error, path, op)
    }
  }

  async function discard(path: string): Promise<void> {
    await fs.unlink(abs(path)).catch(() => undefined)
  }

  /** Monotonic per name in this page, so two writes in one millisecond still differ. */
  function nextStamp(): Date {
    guard.lastStamp = Math.max(Date.now(), guard.lastStamp + 1)
    return new Date(guard.lastStamp)
  }

  /** A hidden name beside `path` for a temp or set-aside entry. */
  function sibling(path: WorkspacePath, suffix: string): string {
    const parent = WorkspacePath.parent(path)
    const own = `.${WorkspacePath.basename(path)}.${randomTag()}.${suffix}`
    return parent === '' ? own : `${parent}/${own}`
  }

  /**
   * Moves `from` over the existing file `to`: the old entry is set aside and the new one moved in
   * (two metadata moves with no reader in between), the superblock is flushed, and only then is
   * the old inode's data deleted (and the superblock flushed again). When the first flush fails
   * the swap is undone and `from` is back.
   */
  async function replace(from: string, to: WorkspacePath, op: string): Promise<void> {
    const aside = sibling(to, 'isoagent-old')
    await exclusive(guard, async () => {
      try {
        await fs.rename(abs(to), abs(aside))
      } catch (error) {
        throw fromFsError(error, to, op)
      }
      try {
        await fs.rename(abs(from), abs(to))
      } catch (error) {
        await fs.rename(abs(aside), abs(to)).catch(() => undefined)
        throw fromFsError(error, to, op)
      }
    })
    try {
      await flush(to, op)
    } catch (error) {
      await exclusive(guard, async () => {
        await fs.rename(abs(to), abs(from)).catch(() => undefined)
        await fs.rename(abs(aside), abs(to)).catch(() => undefined)
      })
      throw error
    }
    await discard(aside)
    // Saved again at once, or a page reloaded before lightning-fs's own delayed save would see
    // the set-aside entry, whose data is gone. The write has landed either way.
    await fs.flush().catch(() => undefined)
  }

  async function put(
    path: WorkspacePath,
    data: Uint8Array,
    options: WriteOptions,
  ): Promise<WriteOutcome> {
    if (path === '') throw new IsoagentError('is_directory', 'the workspace root is a directory')
    const parent = WorkspacePath.parent(path)
    const probe = await probeAncestors(path)
    if (probe.kind === 'symlink') throw throughSymlink(path, probe.at)
    if (probe.kind === 'file') throw notDirectory(path, probe.at)
    const current = probe.kind === 'ok' ? await lstat(path) : undefined
    if (current?.type === 'dir') throw isDirectory(path)
    if (current?.type === 'symlink') throw throughSymlink(path, path)
    checkPrecondition(path, current === undefined ? null : versionOf(current), options.precondition)
    let createdDirs: string[] = []
    if (probe.kind === 'missing') {
      if (options.createParents === false) throw notFound(parent)
      createdDirs = await makeDirs(parent)
    }
    const cancelled = () => new IsoagentError('cancelled', `write of ${path} cancelled`)

    // IndexedDB clones the whole buffer behind a view: store exactly the bytes.
    const bytes =
      data.byteOffset === 0 && data.byteLength === data.buffer.byteLength
        ? data
        : new Uint8Array(data)
    const temp = sibling(path, 'isoagent-tmp')
    try {
      if (options.signal?.aborted) throw cancelled()
      await fs.writeFile(abs(temp), bytes)
      const stamp = nextStamp()
      await fs.utimes(abs(temp), stamp, stamp)
      if (options.signal?.aborted) throw cancelled()
      if (current === undefined) {
        await fs.rename(abs(temp), abs(path))
        try {
          await flush(path, 'write')
        } catch (error) {
          // The superblock that would hold the new file was not saved: take the file back out.
          await discard(path)
          throw error
        }
      } else {
        await replace(temp, path, 'write')
      }
    } catch (error) {
      // Nothing of the write stays: the temp entry and its data, and directories made for it.
      await discard(temp)
      for (const dir of createdDirs.reverse()) await fs.rmdir(abs(dir)).catch(() => undefined)
      throw fromFsError(error, path, 'write')
    }
    const after = await lstat(path)
    return { created: current === undefined, version: after === undefined ? '' : versionOf(after) }
  }

  async function removeTree(path: string): Promise<void> {
    for (const child of await fs.readdir(abs(path))) {
      const childPath = path === '' ? child : `${path}/${child}`
      const stat = await lstat(childPath)
      if (stat?.type === 'dir') await removeTree(childPath)
      else if (stat !== undefined) await fs.unlink(abs(childPath))
    }
    if (path !== '') await fs.rmdir(abs(path))
  }

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

    stat(path) {
      return op(() =>
        shared(guard, async (): Promise<WorkspaceStat | undefined> => {
          const stat = await entry(path, 'undefined')
          if (stat === undefined) return undefined
          const kind = kindOf(stat)
          return {
            path,
            kind,
            size: kind === 'file' ? stat.size : 0,
            mtimeMs: stat.mtimeMs,
            mode: stat.mode & 0o7777,
            version: versionOf(stat),
          }
        }),
      )
    },

    read(path, range) {
      return op(() => shared(guard, async () => clip(await readWhole(path), range)))
    },

    readStream(path, range) {
      return op(async () => {
        const data = await shared(guard, async () => clip(await readWhole(path), range))
        let at = 0
        return new ReadableStream<Uint8Array>({
          pull(controller) {
            if (at < data.length) {
              const end = Math.min(data.length, at + chunkBytes)
              controller.enqueue(data.subarray(at, end))
              at = end
            }
            if (at >= data.length) controller.close()
          },
        })
      })
    },

    write(path, data, writeOptions = {}) {
      return op(() => serialised(guard, () => put(path, data, writeOptions)))
    },

    list(path, listOptions: ListOptions = {}) {
      return op(() =>
        shared(guard, async (): Promise<ListPage> => {
          if (listOptions.signal?.aborted)
            throw new IsoagentError('cancelled', `listing ${show(path)} cancelled`)
          const stat = await entry(path, 'throw')
          if (stat === undefined) throw notFound(path)
          if (stat.type === 'symlink') throw throughSymlink(path, path)
          if (stat.type !== 'dir')
            throw new IsoagentError('not_directory', `${show(path)} is a file`, {
              data: { path },
            })
          let names: string[]
          try {
            names = (await fs.readdir(abs(path))).sort()
          } catch (error) {
            throw fromFsError(error, path, 'list')
          }
          const { names: slice, next } = pageOfNames(names, listOptions.after, listOptions.limit)
          const entries: DirEntry[] = []
          for (const child of slice) {
            const s = await lstat(WorkspacePath.child(path, child))
            if (s === undefined) continue // removed while listing
            const kind = kindOf(s)
            entries.push(
              kind === 'file' ? { name: child, kind, size: s.size } : { name: child, kind },
            )
          }
          return next === undefined ? { entries } : { entries, next }
        }),
      )
    },

    mkdir(path) {
      return op(() =>
        serialised(guard, async () => {
          await makeDirs(path)
          await flush(path, 'mkdir')
        }),
      )
    },

    remove(path, removeOptions = {}) {
      return op(() =>
        serialised(guard, async () => {
          if (path === '')
            throw new IsoagentError('invalid_argument', 'refusing to remove the workspace root')
          const stat = await entry(path, 'throw')
          if (stat === undefined) throw notFound(path)
          try {
            if (stat.type !== 'dir') await fs.unlink(abs(path))
            else if (removeOptions.recursive === true) await removeTree(path)
            else await fs.rmdir(abs(path))
          } catch (error) {
            throw fromFsError(error, path, 'remove')
          }
          await flush(path, 'remove')
        }),
      )
    },

    rename(from, to) {
      return op(() =>
        serialised(guard, async () => {
          if (from === '' || to === '')
            throw new IsoagentError('invalid_argument', 'cannot rename the workspace root', {
              data: { from, to },
            })
          if (to === from) return
          const source = await entry(from, 'throw')
          if (source === undefined) throw notFound(from)
          if (to.startsWith(from + '/'))
            throw new IsoagentError(
              'invalid_argument',
              `cannot move ${show(from)} into itself (${show(to)})`,
              { data: { from, to } },
            )
          await makeDirs(WorkspacePath.parent(to))
          const target = await lstat(to)
          if (target === undefined) {
            try {
              await fs.rename(abs(from), abs(to))
            } catch (error) {
              throw fromFsError(error, from, 'rename')
            }
            await flush(to, 'rename')
            return
          }
          if (source.type === 'dir') {
            if (target.type !== 'dir') throw notDirectory(to, to)
            if ((await fs.readdir(abs(to))).length > 0)
              throw new IsoagentError('not_empty', `rename ${show(to)}: not empty`, {
                data: { path: to },
              })
            await exclusive(guard, async () => {
              try {
                await fs.rmdir(abs(to))
                await fs.rename(abs(from), abs(to))
              } catch (error) {
                throw fromFsError(error, from, 'rename')
              }
            })
            await flush(to, 'rename')
            return
          }
          if (target.type === 'dir') throw isDirectory(to)
          await replace(from, to, 'rename')
        }),
      )
    },

    async close() {
      if (closed) return
      closed = true
      if (inflight > 0) await new Promise<void>((done) => (settled = done))
      await serialised(guard, async () => {
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
    },
  } satisfies WorkspaceServices
}
