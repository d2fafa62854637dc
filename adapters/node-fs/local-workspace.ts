import { randomBytes } from 'node:crypto'
import { realpathSync, statSync } from 'node:fs'
import * as fs from 'node:fs/promises'
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
import { gitCliAvailable, gitCliBackend } from './git-cli-backend.ts'

/** Options of {@link localWorkspace}. */
export interface LocalWorkspaceOptions {
  /** Chunk size of streamed reads (default 1 MiB). */
  readChunkBytes?: number
  /**
   * Which backend serves the `git` tool: `cli` (the git executable), `isomorphic` (isomorphic-git
   * on `node:fs`), or `auto` (default): the CLI when `git` is on PATH, else isomorphic-git. Both
   * give identical results; the CLI is much faster on large repositories.
   */
  git?: 'auto' | 'cli' | 'isomorphic'
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
  const withLock = keyedLock()

  const contained = (real: string) => real === realRoot || real.startsWith(realRoot + nodePath.sep)
  const escape = (path: string) =>
    new IsoagentError(
      'path_escape',
      `${WorkspacePath.display(path as WorkspacePath)} resolves outside the workspace through a symlink`,
      {
        data: { path },
      },
    )

  /** The real location of `abs` (symlinks resolved, also dangling ones), or throws path_escape. */
  async function realOf(abs: string, path: string, hops = 0): Promise<string> {
    if (hops > 32) throw escape(path)
    try {
      const real = await fs.realpath(abs)
      if (!contained(real)) throw escape(path)
      return real
    } catch (error) {
      if (error instanceof IsoagentError) throw error
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        throw fromErrno(error, path, 'resolve')
    }
    const link = await fs.lstat(abs).catch(() => undefined)
    if (link?.isSymbolicLink()) {
      const target = nodePath.resolve(nodePath.dirname(abs), await fs.readlink(abs))
      return realOf(target, path, hops + 1)
    }
    const parent = nodePath.dirname(abs)
    if (parent === abs) throw escape(path)
    const realParent = await realOf(parent, path, hops)
    return nodePath.join(realParent, nodePath.basename(abs))
  }

  const resolve = (path: WorkspacePath) =>
    realOf(path === '' ? realRoot : nodePath.join(realRoot, path), path)
  /** The real parent directory joined with the entry's own name (the entry itself not followed). */
  const resolveEntry = async (path: WorkspacePath) =>
    nodePath.join(await resolve(WorkspacePath.parent(path)), WorkspacePath.basename(path))

  function versionOf(s: { mtimeNs: bigint; size: bigint; ino: bigint; ctimeNs: bigint }): string {
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`
  }

  async function statReal(real: string, path: WorkspacePath): Promise<WorkspaceStat | undefined> {
    try {
      const s = await fs.stat(real, { bigint: true })
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
    const real = await resolve(path)
    try {
      return await fs.open(real, 'r')
    } catch (error) {
      throw fromErrno(error, path, 'open')
    }
  }

  async function readRange(path: WorkspacePath, range: ByteRange = {}): Promise<Uint8Array> {
    const handle = await openFile(path)
    try {
      const s = await handle.stat()
      if (s.isDirectory())
        throw new IsoagentError('is_directory', `${WorkspacePath.display(path)} is a directory`, {
          data: { path },
        })
      const start = Math.min(Math.max(0, range.offset ?? 0), s.size)
      const end =
        range.length === undefined ? s.size : Math.min(s.size, start + Math.max(0, range.length))
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

  return {
    capabilities: {
      read: true,
      write: true,
      exec: false,
      git: true,
      search: true,
      localRoot: realRoot,
      atomicRename: true,
      conditionalWrite: false,
      symlinks: true,
    },
    descriptor: { kind: 'local', root: realRoot },
    gitFs: localGitBackend(realRoot, options.git ?? 'auto'),

    async stat(path) {
      return statReal(await resolve(path), path)
    },

    read: readRange,

    async readStream(path, range = {}) {
      const handle = await openFile(path)
      let position: number
      let remaining: number
      try {
        const s = await handle.stat()
        if (s.isDirectory())
          throw new IsoagentError('is_directory', `${WorkspacePath.display(path)} is a directory`, {
            data: { path },
          })
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
            const buffer = new Uint8Array(want)
            const { bytesRead } =
              want === 0 ? { bytesRead: 0 } : await handle.read(buffer, 0, want, position)
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
      const real = await resolve(path)
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
      const real = await resolve(path)
      let dirents
      try {
        dirents = await fs.readdir(real, { withFileTypes: true })
      } catch (error) {
        throw fromErrno(error, path, 'list')
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
      const real = await resolve(path)
      try {
        await fs.mkdir(real, { recursive: true })
      } catch (error) {
        throw fromErrno(error, path, 'mkdir')
      }
    },

    async remove(path, removeOptions = {}) {
      if (path === '')
        throw new IsoagentError('invalid_argument', 'refusing to remove the workspace root')
      const entry = await resolveEntry(path)
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
      const source = await resolveEntry(from)
      const target = await resolve(to)
      try {
        await fs.mkdir(nodePath.dirname(target), { recursive: true })
        await fs.rename(source, target)
      } catch (error) {
        throw fromErrno(error, from, 'rename')
      }
    },
  } satisfies WorkspaceServices
}
