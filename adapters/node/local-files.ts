import {
  type Dirent,
  constants as fsConstants,
  readdirSync,
  closeSync,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  statfsSync,
  statSync,
} from 'node:fs'
import * as fs from 'node:fs/promises'
import * as nodePath from 'node:path'
import { IsoagentError, type IsoagentErrorCode } from '../../src/errors.ts'
import { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import { clipRange, isDirectoryError, pageOfNames } from '../../src/workspace/adapter-kit.ts'
import { ListingCache, type DirStamp, type Listing } from './listing-cache.ts'
import { inside, pathOfFd, PROC_FD } from './pinned-dir.ts'
import { isSideFile, reapStaleTemps } from './side-files.ts'
import type {
  ByteIndex,
  ByteRange,
  DirEntry,
  EntryKind,
  ListOptions,
  ListPage,
  WorkspaceStat,
} from '../../src/workspace/workspace-services.ts'

// Path resolution and reads of the local workspace: what its search workers load, without the
// shell, git and write machinery.

/** Reads up to this many bytes are served synchronously (see `syncMetadata`). */
export const SYNC_READ_MAX_BYTES = 1024 * 1024
/**
 * Reads into a caller's buffer (`readNow`'s `into`) are served synchronously up to this many
 * bytes: nothing is allocated, and a read from the page cache takes a few milliseconds.
 */
export const SYNC_READ_INTO_MAX_BYTES = 16 * 1024 * 1024
/**
 * How long a directory's checked real path is reused (ms). A walk reads the files of one
 * directory within a moment, so each directory is resolved once instead of once per file; a
 * directory swapped for a symlink is noticed within this time.
 */
export const DIR_CACHE_MS = 100
export const DIR_CACHE_MAX = 16384

/**
 * Linux file systems (`statfs` magic numbers) whose directory timestamps this kernel sets on
 * every change to the entries: ext2/3/4, xfs, btrfs, tmpfs, overlayfs, zfs, f2fs. Elsewhere
 * (network and FUSE file systems, other systems) listings are never reused.
 */
const STAMPED_FILE_SYSTEMS = new Set([
  0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010,
])

/** This thread's directory listings, shared by every local workspace it serves. */
export const listings = new ListingCache({ maxNames: 500_000, settleMs: 2000 })

/** The device of `realRoot` when its listings may be reused, else undefined. */
function stampedDevice(realRoot: string): number | undefined {
  if (process.platform !== 'linux') return undefined
  try {
    if (!STAMPED_FILE_SYSTEMS.has(statfsSync(realRoot).type)) return undefined
    return statSync(realRoot).dev
  } catch {
    return undefined
  }
}

const bufferIndexOf = Buffer.prototype.indexOf
/**
 * How the search finds byte values in local files (grep's literal search among them): Node's
 * `Buffer.prototype.indexOf`, which is memchr: same answers, an order of magnitude faster.
 */
export const MEMCHR_INDEX: ByteIndex = {
  indexOf: (bytes, byte, from) => bufferIndexOf.call(bytes, byte, from),
  nsPerByte: 0.02,
}

const ERRNO: Record<string, IsoagentErrorCode> = {
  ENOENT: 'not_found',
  EISDIR: 'is_directory',
  ENOTDIR: 'not_directory',
  EACCES: 'permission_denied',
  EPERM: 'permission_denied',
  ENOTEMPTY: 'not_empty',
  EEXIST: 'already_exists',
  ELOOP: 'path_escape',
  // open(2) of a socket file
  ENXIO: 'invalid_argument',
}

export function fromErrno(error: unknown, path: string, op: string): IsoagentError {
  if (error instanceof IsoagentError) return error
  const code = (error as NodeJS.ErrnoException).code ?? ''
  const mapped = ERRNO[code] ?? 'io'
  const shown = WorkspacePath.display(path as WorkspacePath)
  const message =
    mapped === 'not_found'
      ? `not found: ${shown}`
      : mapped === 'io'
        ? `${op} ${shown} failed: ${code || (error as Error).message}`
        : `${op} ${shown}: ${mapped.replace('_', ' ')}`
  return new IsoagentError(mapped, message, { data: { path, errno: code }, cause: error })
}

/**
 * `n` bytes to read into, not zeroed (every byte handed out is overwritten by the read): small
 * ones come from Node's shared buffer pool, so reading many small files allocates little.
 */
function scratchBytes(n: number): Uint8Array {
  const b = Buffer.allocUnsafe(n)
  return new Uint8Array(b.buffer, b.byteOffset, n)
}

/** A directory's checked real path and when it was checked (`Date.now()`), as cached. */
export interface DirHint {
  path: WorkspacePath
  real: string
  at: number
}

function kindOf(entry: {
  isFile(): boolean
  isDirectory(): boolean
  isSymbolicLink(): boolean
}): EntryKind {
  if (entry.isFile()) return 'file'
  if (entry.isDirectory()) return 'directory'
  if (entry.isSymbolicLink()) return 'symlink'
  return 'other'
}

/**
 * Remove, in the background, stale temp files among `dirents` of the directory `real` (a
 * listing hides them; this keeps them from piling up where a crash left them).
 */
export function reapSideFiles(real: string, dirents: readonly Dirent[]): void {
  let side: string[] | undefined
  for (const d of dirents) if (isSideFile(d.name)) (side ??= []).push(d.name)
  if (side !== undefined) void reapStaleTemps(real, side).catch(() => undefined)
}

/**
 * The listing `readdir` gave as `dirents`: kinds by name, names sorted, the workspace's own side
 * files (temp files and write locks, see side-files.ts) left out.
 */
export function listingOf(dirents: readonly Dirent[]): Listing {
  const kinds = new Map<string, EntryKind>()
  for (const d of dirents) if (!isSideFile(d.name)) kinds.set(d.name, kindOf(d))
  const names = [...kinds.keys()].sort()
  const entries = names.map((name) => Object.freeze({ name, kind: kinds.get(name)! }))
  return { names, kinds, entries }
}

/** One page of `listing`. */
export function listingPage(listing: Listing, options: ListOptions): ListPage {
  // A page of the whole listing shares its (frozen) entries: a walk allocates none per entry.
  if (options.after === undefined && (options.limit ?? Infinity) >= listing.names.length)
    return { entries: listing.entries.slice() }
  const page = pageOfNames(listing.names, options.after, options.limit)
  const entries: DirEntry[] = page.names.map((name) => ({ name, kind: listing.kinds.get(name)! }))
  return page.next === undefined ? { entries } : { entries, next: page.next }
}

/** The version of a file: inode, size, and modification and change times in nanoseconds. */
export function versionOf(s: {
  mtimeNs: bigint
  size: bigint
  ino: bigint
  ctimeNs: bigint
}): string {
  return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`
}

/** Options of {@link localFiles}. */
export interface LocalFilesOptions {
  /** Serve resolution, stat and small reads with synchronous calls (`syncMetadata`). */
  syncIo: boolean
  /** Chunk size of streamed reads. */
  chunkBytes: number
  /** Reuse unchanged directories' listings (see {@link ListingCache}); default true. */
  listingCache?: boolean
}

/**
 * Containment-checked resolution and reads below `realRoot` (a real path): the read side of a
 * local workspace, shared by the workspace and its search workers.
 */
export function localFiles(realRoot: string, options: LocalFilesOptions) {
  const { syncIo, chunkBytes } = options
  /** Listings on this device are reused while their directory is unchanged. */
  const device = options.listingCache === false ? undefined : stampedDevice(realRoot)
  const contained = (real: string) => real === realRoot || real.startsWith(realRoot + nodePath.sep)
  const escape = (path: string) =>
    new IsoagentError(
      'path_escape',
      `${WorkspacePath.display(path as WorkspacePath)} resolves outside the workspace through a symlink`,
      {
        data: { path },
      },
    )

  /**
   * The real location of `abs` (symlinks resolved, also dangling ones), or throws path_escape.
   * Synchronous: a few system calls that hit the kernel's dentry cache.
   */
  function realOf(abs: string, path: string, hops = 0): string {
    if (hops > 32) throw escape(path)
    try {
      const real = realpathSync.native(abs)
      if (!contained(real)) throw escape(path)
      return real
    } catch (error) {
      if (error instanceof IsoagentError) throw error
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        throw fromErrno(error, path, 'resolve')
    }
    let link
    try {
      link = lstatSync(abs)
    } catch {
      link = undefined
    }
    if (link?.isSymbolicLink()) {
      const target = nodePath.resolve(nodePath.dirname(abs), readlinkSync(abs))
      return realOf(target, path, hops + 1)
    }
    const parent = nodePath.dirname(abs)
    if (parent === abs) throw escape(path)
    const realParent = realOf(parent, path, hops)
    return nodePath.join(realParent, nodePath.basename(abs))
  }

  const resolve = (path: WorkspacePath) =>
    realOf(path === '' ? realRoot : nodePath.join(realRoot, path), path)

  const dirCache = new Map<string, { real: string; at: number }>()
  /**
   * The checked real path of an existing directory, reused for {@link DIR_CACHE_MS}. A directory
   * that is no symlink, in a parent with a checked real path, lies below that path: one `lstat`
   * instead of resolving every component again.
   */
  function realDir(path: WorkspacePath): string {
    if (path === '') return realRoot
    const now = Date.now()
    const hit = dirCache.get(path)
    if (hit !== undefined && now - hit.at < DIR_CACHE_MS) return hit.real
    const below = belowCachedParent(path)
    let link
    try {
      link = below === undefined ? undefined : lstatSync(below, { throwIfNoEntry: false })
    } catch {
      link = undefined
    }
    if (link?.isDirectory()) {
      rememberDir(path, below!, now)
      return below!
    }
    let real: string
    try {
      // Only an existing location is cached: a missing one may yet appear as a symlink.
      real = realpathSync.native(nodePath.join(realRoot, path))
    } catch {
      return resolve(path)
    }
    if (!contained(real)) throw escape(path)
    rememberDir(path, real, now)
    return real
  }
  /** Fresh cache entries of `dirs` (checked real paths another thread may adopt). */
  function dirHints(dirs: readonly WorkspacePath[]): DirHint[] {
    const now = Date.now()
    const hints: DirHint[] = []
    let last: string | undefined
    for (const dir of dirs) {
      if (dir === last) continue
      last = dir
      const hit = dirCache.get(dir)
      if (hit !== undefined && now - hit.at < DIR_CACHE_MS)
        hints.push({ path: dir, real: hit.real, at: hit.at })
    }
    return hints
  }
  /** Adopt another thread's fresh entries; each still expires DIR_CACHE_MS after its check. */
  function seedDirs(hints: readonly DirHint[]) {
    const now = Date.now()
    for (const h of hints)
      if (now - h.at < DIR_CACHE_MS && contained(h.real)) rememberDir(h.path, h.real, h.at)
  }
  /**
   * Where `path` lies below its parent's cached real path, without looking at its last
   * component; undefined for the root or when the parent cannot be resolved that way.
   */
  function belowCachedParent(path: WorkspacePath): string | undefined {
    if (path === '') return undefined
    let parent: string
    try {
      parent = realDir(WorkspacePath.parent(path))
    } catch {
      return undefined
    }
    // A workspace path's name is one plain component: no separator, no `.` or `..`.
    const name = WorkspacePath.basename(path)
    return parent.endsWith(nodePath.sep) ? parent + name : parent + nodePath.sep + name
  }
  /**
   * The real location of `path` when its last component is not a symlink: its parent's cached
   * real path joined with its name. Symlinks (and anything unusual) take the full resolution.
   */
  function resolveFast(path: WorkspacePath): string {
    const candidate = syncIo ? belowCachedParent(path) : undefined
    if (candidate === undefined) return resolve(path)
    let link
    try {
      link = lstatSync(candidate, { throwIfNoEntry: false })
    } catch {
      link = undefined
    }
    return link === undefined || link.isSymbolicLink() ? resolve(path) : candidate
  }
  const O_NOFOLLOW = (fsConstants as { O_NOFOLLOW?: number }).O_NOFOLLOW ?? 0
  /**
   * Flags of every open for reading: the last component never followed (a resolved path's last
   * component is no symlink, so one there now was swapped in: ELOOP, refused as path_escape), and
   * non-blocking, so a FIFO cannot stall a thread (callers refuse non-regular files).
   */
  const READ_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0) | O_NOFOLLOW
  /**
   * Check that the descriptor `fd`, opened for `path`, lies inside the root: by the kernel's own
   * account of where it is (/proc/self/fd on Linux), else by comparing its device and inode with
   * those of the path resolved again. A folder on the way swapped for a symlink between the
   * resolution and the open is caught here. Throws path_escape when not (the caller closes `fd`).
   */
  function checkOpened(fd: number, path: WorkspacePath): void {
    let ok: boolean
    if (PROC_FD) {
      const where = pathOfFd(fd)
      ok = where !== undefined && inside(realRoot, where)
    } else {
      try {
        const opened = fstatSync(fd)
        const named = statSync(resolve(path))
        ok = opened.dev === named.dev && opened.ino === named.ino
      } catch {
        ok = false
      }
    }
    if (!ok) throw escape(path)
  }
  /** Open for reading and check where the descriptor landed (see {@link checkOpened}). */
  function openSyncForRead(path: WorkspacePath): number {
    const candidate = belowCachedParent(path)
    let fd: number | undefined
    if (candidate !== undefined) {
      try {
        fd = openSync(candidate, READ_FLAGS)
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code !== 'ELOOP' && code !== 'ENOENT') throw error
      }
    }
    fd ??= openResolved(path)
    try {
      checkOpened(fd, path)
    } catch (error) {
      closeSync(fd)
      throw error
    }
    return fd
  }
  /** Open the resolved location of `path` for reading. */
  function openResolved(path: WorkspacePath): number {
    try {
      return openSync(resolve(path), READ_FLAGS)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw escape(path)
      throw error
    }
  }
  /** The real parent directory joined with the entry's own name (the entry itself not followed). */
  const resolveEntry = (path: WorkspacePath) =>
    nodePath.join(resolve(WorkspacePath.parent(path)), WorkspacePath.basename(path))

  async function statReal(real: string, path: WorkspacePath): Promise<WorkspaceStat | undefined> {
    try {
      const s = syncIo
        ? statSync(real, { bigint: true, throwIfNoEntry: false })
        : await fs.stat(real, { bigint: true })
      if (s === undefined) return undefined
      return {
        path,
        kind: s.isDirectory() ? 'directory' : s.isFile() ? 'file' : 'other',
        size: s.isDirectory() ? 0 : Number(s.size),
        mtimeMs: Number(s.mtimeMs),
        mode: Number(s.mode) & 0o7777,
        version: versionOf(s),
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw fromErrno(error, path, 'stat')
    }
  }

  /** Open `path` for reading (see {@link READ_FLAGS}) and check where it landed. */
  async function openFile(path: WorkspacePath) {
    let handle: fs.FileHandle
    try {
      handle = await fs.open(resolve(path), READ_FLAGS)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw escape(path)
      throw fromErrno(error, path, 'open')
    }
    try {
      checkOpened(handle.fd, path)
    } catch (error) {
      await handle.close().catch(() => undefined)
      throw error
    }
    return handle
  }

  const notFile = isDirectoryError
  /** A directory is_directory; a FIFO, socket or device invalid_argument; a file passes. */
  function checkRegular(s: { isDirectory(): boolean; isFile(): boolean }, path: WorkspacePath) {
    if (s.isDirectory()) throw notFile(path)
    if (!s.isFile())
      throw new IsoagentError(
        'invalid_argument',
        `${WorkspacePath.display(path)} is not a regular file (a FIFO, socket or device); only regular files are read`,
        { data: { path } },
      )
  }

  /** Bytes `[start, end)` of a file of `size` bytes, clipped to it. */
  function span(range: ByteRange, size: number): [number, number] {
    return clipRange(range, size)
  }

  /** The largest read served synchronously, into `into` when given. */
  const syncLimit = (into: Uint8Array | undefined) =>
    into === undefined
      ? SYNC_READ_MAX_BYTES
      : Math.max(SYNC_READ_MAX_BYTES, Math.min(into.length, SYNC_READ_INTO_MAX_BYTES))

  /** A small read with synchronous calls; undefined when the span is too large for that. */
  function readSmall(
    path: WorkspacePath,
    range: ByteRange,
    into?: Uint8Array,
  ): Uint8Array | undefined {
    let fd: number
    try {
      fd = openSyncForRead(path)
    } catch (error) {
      throw fromErrno(error, path, 'open')
    }
    try {
      const s = fstatSync(fd)
      checkRegular(s, path)
      const [start, end] = span(range, s.size)
      if (end - start > syncLimit(into)) return undefined
      const out =
        into !== undefined && end - start <= into.length
          ? into.subarray(0, end - start)
          : scratchBytes(end - start)
      let at = 0
      while (at < out.length) {
        const n = readSync(fd, out, at, out.length - at, start + at)
        if (n === 0) break
        at += n
      }
      return at === out.length ? out : out.subarray(0, at)
    } catch (error) {
      throw fromErrno(error, path, 'read')
    } finally {
      closeSync(fd)
    }
  }

  /** A read served with synchronous calls, when `syncIo` and it is small enough. */
  function readNow(
    path: WorkspacePath,
    range: ByteRange = {},
    into?: Uint8Array,
  ): Uint8Array | undefined {
    // A span too large for a read at once is known before opening the file only without a
    // buffer; with one, the file's size decides (a request may ask for more than is there).
    if (
      !syncIo ||
      (into === undefined && range.length !== undefined && range.length > SYNC_READ_MAX_BYTES)
    )
      return undefined
    return readSmall(path, range, into)
  }

  async function readRange(path: WorkspacePath, range: ByteRange = {}): Promise<Uint8Array> {
    const now = readNow(path, range)
    if (now !== undefined) return now
    const handle = await openFile(path)
    try {
      const s = await handle.stat()
      checkRegular(s, path)
      const [start, end] = span(range, s.size)
      const out = new Uint8Array(end - start)
      let at = 0
      while (at < out.length) {
        const { bytesRead } = await handle.read(out, at, out.length - at, start + at)
        if (bytesRead === 0) break
        at += bytesRead
      }
      return at === out.length ? out : out.subarray(0, at)
    } catch (error) {
      throw fromErrno(error, path, 'read')
    } finally {
      await handle.close()
    }
  }

  async function readStream(
    path: WorkspacePath,
    range: ByteRange = {},
  ): Promise<ReadableStream<Uint8Array>> {
    const handle = await openFile(path)
    let position: number
    let remaining: number
    try {
      const s = await handle.stat()
      checkRegular(s, path)
      position = Math.min(Math.max(0, range.offset ?? 0), s.size)
      remaining = range.length === undefined ? Number.POSITIVE_INFINITY : Math.max(0, range.length)
    } catch (error) {
      await handle.close()
      throw fromErrno(error, path, 'read')
    }
    let closed = false
    const close = async () => {
      if (!closed) {
        closed = true
        await handle.close()
      }
    }
    // A byte stream: a BYOB reader has each chunk read into its own buffer; a default reader
    // gets a new chunk of chunkBytes each time.
    return new ReadableStream({
      type: 'bytes',
      autoAllocateChunkSize: chunkBytes,
      async pull(controller) {
        const request = controller.byobRequest!
        try {
          const view = request.view!
          const want = Math.min(view.byteLength, remaining)
          const into = new Uint8Array(view.buffer, view.byteOffset, want)
          // A chunk from the page cache takes well under a millisecond to copy: with
          // syncMetadata it is read in place instead of through the thread pool.
          const bytesRead =
            want === 0
              ? 0
              : syncIo
                ? readSync(handle.fd, into, 0, want, position)
                : (await handle.read(into, 0, want, position)).bytesRead
          if (bytesRead === 0) {
            await close()
            controller.close()
            request.respond(0)
            return
          }
          position += bytesRead
          remaining -= bytesRead
          request.respond(bytesRead)
        } catch (error) {
          await close()
          controller.error(fromErrno(error, path, 'read'))
        }
      },
      async cancel() {
        await close()
      },
    })
  }

  /** Cache a directory's real path, checked at `at`. */
  function rememberDir(path: WorkspacePath, real: string, at: number) {
    if (dirCache.size >= DIR_CACHE_MAX) dirCache.clear()
    dirCache.set(path, { real, at })
  }

  /**
   * A listing page with synchronous calls, below the directory's checked real path. Listed
   * subdirectories (real directories, not symlinks) resolve to real/name: they are cached, so
   * walking into them costs no path resolution.
   */
  function listSync(path: WorkspacePath, listOptions: ListOptions = {}): ListPage {
    const real = realDir(path)
    // When the listing began, and when the directories in it were checked.
    const now = Date.now()
    const stamp = device === undefined ? undefined : stampOf(real)
    let listing = stamp === undefined ? undefined : listings.get(real, stamp)
    if (listing === undefined) {
      let dirents
      try {
        dirents = readdirSync(real, { withFileTypes: true })
      } catch (error) {
        throw fromErrno(error, path, 'list')
      }
      listing = listingOf(dirents)
      reapSideFiles(real, dirents)
      if (stamp !== undefined) listings.put(real, stamp, listing, now)
    }
    const base = real.endsWith(nodePath.sep) ? real : real + nodePath.sep
    for (const [name, kind] of listing.kinds)
      if (kind === 'directory') rememberDir(WorkspacePath.child(path, name), base + name, now)
    return listingPage(listing, listOptions)
  }

  /** The stamp of the directory `real` when it is on the reused device, else undefined. */
  function stampOf(real: string): DirStamp | undefined {
    let s
    try {
      s = statSync(real, { throwIfNoEntry: false })
    } catch {
      return undefined
    }
    if (s === undefined || !s.isDirectory() || s.dev !== device) return undefined
    return { dev: s.dev, ino: s.ino, ctimeMs: s.ctimeMs, mtimeMs: s.mtimeMs }
  }

  /** Facts about `path` (symlinks inside the root followed), or undefined when nothing is there. */
  const stat = (path: WorkspacePath) => statReal(resolveFast(path), path)

  return {
    listSync,
    resolve,
    dirHints,
    seedDirs,
    resolveEntry,
    stat,
    statReal,
    readNow,
    readRange,
    readStream,
    byteIndex: MEMCHR_INDEX,
  }
}
