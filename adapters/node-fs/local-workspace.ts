import { randomBytes } from 'node:crypto'
import {
  constants as fsConstants,
  closeSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  statSync,
} from 'node:fs'
import * as fs from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import * as nodePath from 'node:path'
import * as nodeFs from 'node:fs'
import {
  checkPrecondition,
  isomorphicGitBackend,
  type GitBackend,
  type IsoGitFs,
  IsoagentError,
  keyedLock,
  pageOfNames,
  WorkspacePath,
  type ByteRange,
  type DirEntry,
  type EntryKind,
  type IsoagentErrorCode,
  type ListPage,
  type WorkspaceServices,
  type WorkspaceStat,
  type WriteOptions,
} from '../../src/index.ts'
import { nodeShell } from './node-shell.ts'
import { workerScanner } from './scan-pool.ts'
import { gitCliAvailable, gitCliBackend } from './git-cli-backend.ts'

/** Options of {@link localWorkspace}. */
export interface LocalWorkspaceOptions {
  /** Chunk size of streamed reads (default 1 MiB). */
  readChunkBytes?: number
  /**
   * Serve path resolution, `stat`, `list`, reads of at most {@link SYNC_READ_MAX_BYTES} and the
   * chunks of streamed reads with synchronous system calls (default true). On a local disk each such call takes a few
   * microseconds, where a round trip through Node's thread pool costs tens; a search over tens
   * of thousands of files is several times faster. Set it to false for a root on a network
   * file system, where one call may block the event loop for long.
   */
  syncMetadata?: boolean
  /**
   * Variables for `bash` commands, added on top of the clean base environment (`PATH`, `HOME`,
   * `TMPDIR` when set, `LANG=C.UTF-8`, `TERM=dumb`, `NO_COLOR=1`, `PAGER=cat`, `GIT_PAGER=cat`,
   * `GIT_TERMINAL_PROMPT=0`). Nothing else of the host's environment reaches commands.
   */
  shellEnv?: Record<string, string>
  /**
   * `ulimit -u` for `bash` commands (the most processes the user may have while one runs), to
   * bound fork bombs where the OS enforces it. Off by default; see `nodeShell`.
   */
  shellMaxProcesses?: number
  /**
   * Which backend serves the `git` tool: `cli` (the git executable), `isomorphic` (isomorphic-git
   * on `node:fs`), or `auto` (default): the CLI when `git` is on PATH, else isomorphic-git. Both
   * give identical results; the CLI is much faster on large repositories.
   */
  git?: 'auto' | 'cli' | 'isomorphic'
  /**
   * Worker threads that read and scan files for `search` grep while the calling thread walks
   * the tree (default: one per CPU, at most 4; 0 on a single CPU). 0 scans on the calling
   * thread only. Workers start on the first large grep and exit after 10 s without work.
   */
  searchThreads?: number
}

/**
 * `n` bytes to read into, not zeroed (every byte handed out is overwritten by the read): small
 * ones come from Node's shared buffer pool, so reading many small files allocates little.
 */
function scratchBytes(n: number): Uint8Array {
  const b = Buffer.allocUnsafe(n)
  return new Uint8Array(b.buffer, b.byteOffset, n)
}

/** See {@link LocalWorkspaceOptions.searchThreads}. */
function defaultSearchThreads(): number {
  const cpus = availableParallelism()
  return cpus > 1 ? Math.min(cpus, 4) : 0
}

/** Reads up to this many bytes are served synchronously (see `syncMetadata`). */
export const SYNC_READ_MAX_BYTES = 1024 * 1024
/**
 * How long a directory's checked real path is reused (ms). A walk reads the files of one
 * directory within a moment, so each directory is resolved once instead of once per file; a
 * directory swapped for a symlink is noticed within this time.
 */
const DIR_CACHE_MS = 100
const DIR_CACHE_MAX = 16384

const ERRNO: Record<string, IsoagentErrorCode> = {
  ENOENT: 'not_found',
  EISDIR: 'is_directory',
  ENOTDIR: 'not_directory',
  EACCES: 'permission_denied',
  EPERM: 'permission_denied',
  ENOTEMPTY: 'not_empty',
  EEXIST: 'already_exists',
  ELOOP: 'path_escape',
}

function fromErrno(error: unknown, path: string, op: string): IsoagentError {
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

/** The git backend for a local repository at `root`. */
function localGitBackend(root: string, mode: 'auto' | 'cli' | 'isomorphic'): GitBackend {
  if (mode === 'cli' || (mode === 'auto' && gitCliAvailable())) return gitCliBackend(root)
  return isomorphicGitBackend({
    fs: nodeFs as unknown as IsoGitFs,
    dir: root,
    displayRoot: root,
  })
}

/**
 * A workspace on local disk rooted at `root`. Every path is contained twice: by string
 * ({@link WorkspacePath}) and, at open time, by resolving symlinks against the real root, so a
 * link that points outside is refused (`path_escape`). Writes go to a temp file in the same
 * directory and are renamed into place, keeping the file's mode.
 */
export function localWorkspace(
  root: string,
  options: LocalWorkspaceOptions = {},
): WorkspaceServices {
  return openLocalWorkspace(root, options).workspace
}

/** A directory's checked real path and when it was checked (`Date.now()`), as cached. */
export interface DirHint {
  path: WorkspacePath
  real: string
  at: number
}

/** A local workspace with the hooks its search workers use to share checked directories. */
export interface LocalWorkspaceInternals {
  workspace: WorkspaceServices
  /** Fresh cache entries of the parent directories of `paths`. */
  dirHints(paths: readonly WorkspacePath[]): DirHint[]
  /** Adopt another thread's fresh entries (each still expires {@link DIR_CACHE_MS} after its check). */
  seedDirs(hints: readonly DirHint[]): void
}

/** {@link localWorkspace} with its internal hooks (for the search workers). */
export function openLocalWorkspace(
  root: string,
  options: LocalWorkspaceOptions = {},
): LocalWorkspaceInternals {
  let realRoot: string
  try {
    realRoot = realpathSync(nodePath.resolve(root))
    if (!statSync(realRoot).isDirectory()) throw new Error('not a directory')
  } catch (cause) {
    throw new IsoagentError('not_found', `workspace root ${root} is not an existing directory`, {
      data: { root },
      cause,
    })
  }
  const chunkBytes = options.readChunkBytes ?? 1024 * 1024
  const syncIo = options.syncMetadata !== false
  if (
    options.shellEnv !== undefined &&
    (typeof options.shellEnv !== 'object' ||
      options.shellEnv === null ||
      Object.values(options.shellEnv).some((v) => typeof v !== 'string'))
  )
    throw new IsoagentError('invalid_argument', 'shellEnv must map names to string values')
  const shell = nodeShell({
    root: realRoot,
    ...(options.shellEnv ? { env: options.shellEnv } : {}),
    ...(options.shellMaxProcesses !== undefined ? { maxProcesses: options.shellMaxProcesses } : {}),
  })
  const withLock = keyedLock()
  const threads = options.searchThreads ?? defaultSearchThreads()
  if (!Number.isInteger(threads) || threads < 0)
    throw new IsoagentError('invalid_argument', 'searchThreads must be a whole number ≥ 0')
  const scanner =
    threads > 0
      ? workerScanner({
          root: realRoot,
          threads,
          hints: (paths) => dirHints(paths),
          options: {
            ...(options.readChunkBytes !== undefined
              ? { readChunkBytes: options.readChunkBytes }
              : {}),
            ...(options.syncMetadata !== undefined ? { syncMetadata: options.syncMetadata } : {}),
          },
        })
      : undefined

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
  /** The checked real path of an existing directory, reused for {@link DIR_CACHE_MS}. */
  function realDir(path: WorkspacePath): string {
    if (path === '') return realRoot
    const now = Date.now()
    const hit = dirCache.get(path)
    if (hit !== undefined && now - hit.at < DIR_CACHE_MS) return hit.real
    let real: string
    try {
      // Only an existing location is cached: a missing one may yet appear as a symlink.
      real = realpathSync.native(nodePath.join(realRoot, path))
    } catch {
      return resolve(path)
    }
    if (!contained(real)) throw escape(path)
    if (dirCache.size >= DIR_CACHE_MAX) dirCache.clear()
    dirCache.set(path, { real, at: now })
    return real
  }
  function dirHints(paths: readonly WorkspacePath[]): DirHint[] {
    const now = Date.now()
    const hints: DirHint[] = []
    let last: string | undefined
    for (const p of paths) {
      const parent = WorkspacePath.parent(p)
      if (parent === last || parent === '') continue
      last = parent
      const hit = dirCache.get(parent)
      if (hit !== undefined && now - hit.at < DIR_CACHE_MS)
        hints.push({ path: parent, real: hit.real, at: hit.at })
    }
    return hints
  }
  function seedDirs(hints: readonly DirHint[]) {
    const now = Date.now()
    for (const h of hints) {
      if (now - h.at >= DIR_CACHE_MS || !contained(h.real)) continue
      if (dirCache.size >= DIR_CACHE_MAX) dirCache.clear()
      dirCache.set(h.path, { real: h.real, at: h.at })
    }
  }
  /**
   * Where `path` lies below its parent's cached real path, without looking at its last
   * component; undefined for the root or when the parent cannot be resolved that way.
   */
  function belowCachedParent(path: WorkspacePath): string | undefined {
    if (path === '') return undefined
    try {
      return nodePath.join(realDir(WorkspacePath.parent(path)), WorkspacePath.basename(path))
    } catch {
      return undefined
    }
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
  const O_NOFOLLOW = (fsConstants as { O_NOFOLLOW?: number }).O_NOFOLLOW
  /**
   * Open for reading; the last component is opened without following a symlink when it can be.
   * Non-blocking, so a FIFO cannot stall the event loop (callers refuse non-regular files).
   */
  function openSyncForRead(path: WorkspacePath): number {
    const flags = fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0)
    const candidate = O_NOFOLLOW === undefined ? undefined : belowCachedParent(path)
    if (candidate !== undefined) {
      try {
        return openSync(candidate, flags | (O_NOFOLLOW ?? 0))
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code !== 'ELOOP' && code !== 'ENOENT') throw error
      }
    }
    return openSync(resolve(path), flags)
  }
  /** The real parent directory joined with the entry's own name (the entry itself not followed). */
  const resolveEntry = (path: WorkspacePath) =>
    nodePath.join(resolve(WorkspacePath.parent(path)), WorkspacePath.basename(path))

  function versionOf(s: { mtimeNs: bigint; size: bigint; ino: bigint; ctimeNs: bigint }): string {
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`
  }

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

  async function openFile(path: WorkspacePath) {
    const real = resolve(path)
    try {
      return await fs.open(real, 'r')
    } catch (error) {
      throw fromErrno(error, path, 'open')
    }
  }

  const notFile = (path: WorkspacePath) =>
    new IsoagentError('is_directory', `${WorkspacePath.display(path)} is a directory`, {
      data: { path },
    })

  /** Bytes `[start, end)` of a file of `size` bytes, clipped to it. */
  function span(range: ByteRange, size: number): [number, number] {
    const start = Math.min(Math.max(0, range.offset ?? 0), size)
    const end =
      range.length === undefined ? size : Math.min(size, start + Math.max(0, range.length))
    return [start, end]
  }

  /** A small read with synchronous calls; undefined when the span is too large for that. */
  function readSmall(path: WorkspacePath, range: ByteRange): Uint8Array | undefined {
    let fd: number
    try {
      fd = openSyncForRead(path)
    } catch (error) {
      throw fromErrno(error, path, 'open')
    }
    try {
      const s = fstatSync(fd)
      if (s.isDirectory()) throw notFile(path)
      if (!s.isFile())
        throw new IsoagentError('io', `${WorkspacePath.display(path)} is not a regular file`, {
          data: { path },
        })
      const [start, end] = span(range, s.size)
      if (end - start > SYNC_READ_MAX_BYTES) return undefined
      const out = scratchBytes(end - start)
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

  async function readRange(path: WorkspacePath, range: ByteRange = {}): Promise<Uint8Array> {
    if (syncIo && (range.length === undefined || range.length <= SYNC_READ_MAX_BYTES)) {
      const small = readSmall(path, range)
      if (small !== undefined) return small
    }
    const handle = await openFile(path)
    try {
      const s = await handle.stat()
      if (s.isDirectory()) throw notFile(path)
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

  const workspace: WorkspaceServices = {
    capabilities: {
      read: true,
      write: true,
      exec: true,
      git: true,
      search: true,
      localRoot: realRoot,
      atomicRename: true,
      conditionalWrite: false,
      symlinks: true,
    },
    descriptor: { kind: 'local', root: realRoot },
    shell,
    gitFs: localGitBackend(realRoot, options.git ?? 'auto'),
    ...(scanner ? { scanner } : {}),
    async close() {
      await scanner?.close()
    },

    async stat(path) {
      return statReal(resolveFast(path), path)
    },

    read: readRange,

    async readStream(path, range = {}) {
      const handle = await openFile(path)
      let position: number
      let remaining: number
      try {
        const s = await handle.stat()
        if (s.isDirectory()) throw notFile(path)
        position = Math.min(Math.max(0, range.offset ?? 0), s.size)
        remaining =
          range.length === undefined ? Number.POSITIVE_INFINITY : Math.max(0, range.length)
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
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          try {
            const want = Math.min(chunkBytes, remaining)
            const buffer = scratchBytes(want)
            // A chunk from the page cache takes well under a millisecond to copy: with
            // syncMetadata it is read in place instead of through the thread pool.
            const bytesRead =
              want === 0
                ? 0
                : syncIo
                  ? readSync(handle.fd, buffer, 0, want, position)
                  : (await handle.read(buffer, 0, want, position)).bytesRead
            if (bytesRead === 0) {
              await close()
              controller.close()
              return
            }
            position += bytesRead
            remaining -= bytesRead
            controller.enqueue(bytesRead === want ? buffer : buffer.subarray(0, bytesRead))
          } catch (error) {
            await close()
            controller.error(fromErrno(error, path, 'read'))
          }
        },
        async cancel() {
          await close()
        },
      })
    },

    async write(path, data, writeOptions: WriteOptions = {}) {
      if (path === '') throw new IsoagentError('is_directory', 'the workspace root is a directory')
      const real = resolve(path)
      return withLock(real, async () => {
        const current = await statReal(real, path)
        if (current?.kind === 'directory') {
          throw new IsoagentError('is_directory', `${path} is a directory`, { data: { path } })
        }
        checkPrecondition(path, current?.version ?? null, writeOptions.precondition)
        const dir = nodePath.dirname(real)
        try {
          if (writeOptions.createParents !== false) await fs.mkdir(dir, { recursive: true })
        } catch (error) {
          throw fromErrno(error, WorkspacePath.parent(path), 'mkdir')
        }
        const temp = nodePath.join(
          dir,
          `.${nodePath.basename(real)}.${randomBytes(6).toString('hex')}.isoagent-tmp`,
        )
        try {
          await fs.writeFile(temp, data, { flag: 'wx', mode: current?.mode ?? 0o666 })
          if (current?.mode !== undefined) await fs.chmod(temp, current.mode)
          if (writeOptions.signal?.aborted)
            throw new IsoagentError('cancelled', `write of ${path} cancelled`)
          await fs.rename(temp, real)
        } catch (error) {
          await fs.rm(temp, { force: true }).catch(() => {})
          throw fromErrno(error, path, 'write')
        }
        const after = await statReal(real, path)
        return { created: current === undefined, version: after?.version ?? '' }
      })
    },

    async list(path, listOptions = {}): Promise<ListPage> {
      const real = syncIo ? realDir(path) : resolve(path)
      let dirents
      try {
        dirents = syncIo
          ? readdirSync(real, { withFileTypes: true })
          : await fs.readdir(real, { withFileTypes: true })
      } catch (error) {
        throw fromErrno(error, path, 'list')
      }
      if (syncIo) {
        // A listed subdirectory (a real directory, not a symlink) resolves to real/name: cache
        // it, so walking into it costs no path resolution.
        const now = Date.now()
        for (const d of dirents) {
          if (!d.isDirectory()) continue
          if (dirCache.size >= DIR_CACHE_MAX) dirCache.clear()
          dirCache.set(WorkspacePath.child(path, d.name), {
            real: nodePath.join(real, d.name),
            at: now,
          })
        }
      }
      const byName = new Map(dirents.map((d) => [d.name, d]))
      const page = pageOfNames(
        dirents.map((d) => d.name).sort(),
        listOptions.after,
        listOptions.limit,
      )
      const entries: DirEntry[] = page.names.map((name) => ({
        name,
        kind: kindOf(byName.get(name)!),
      }))
      return page.next === undefined ? { entries } : { entries, next: page.next }
    },

    async mkdir(path) {
      const real = resolve(path)
      try {
        await fs.mkdir(real, { recursive: true })
      } catch (error) {
        throw fromErrno(error, path, 'mkdir')
      }
    },

    async remove(path, removeOptions = {}) {
      if (path === '')
        throw new IsoagentError('invalid_argument', 'refusing to remove the workspace root')
      const entry = resolveEntry(path)
      try {
        const s = await fs.lstat(entry)
        if (s.isDirectory())
          await (removeOptions.recursive === true
            ? fs.rm(entry, { recursive: true })
            : fs.rmdir(entry))
        else await fs.unlink(entry)
      } catch (error) {
        throw fromErrno(error, path, 'remove')
      }
    },

    async rename(from, to) {
      const source = resolveEntry(from)
      const target = resolve(to)
      try {
        await fs.mkdir(nodePath.dirname(target), { recursive: true })
        await fs.rename(source, target)
      } catch (error) {
        throw fromErrno(error, from, 'rename')
      }
    },
  }
  return { workspace, dirHints, seedDirs }
}
