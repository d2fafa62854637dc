import { IsoagentError } from '../../errors.ts'
import { WorkspacePath } from '../../workspace/workspace-path.ts'
import type { WorkspaceServices, WorkspaceStat } from '../../workspace/workspace-services.ts'

/** The promise file-system client isomorphic-git drives (a subset of `node:fs/promises`). */
export interface IsoGitFs {
  promises: {
    readFile(path: string, options?: unknown): Promise<Uint8Array | string>
    writeFile(path: string, data: Uint8Array | string, options?: unknown): Promise<void>
    unlink(path: string): Promise<void>
    readdir(path: string): Promise<string[]>
    mkdir(path: string, options?: unknown): Promise<void>
    rmdir(path: string): Promise<void>
    stat(path: string): Promise<IsoGitStat>
    lstat(path: string): Promise<IsoGitStat>
    readlink(path: string): Promise<string>
    symlink(target: string, path: string): Promise<void>
  }
}

/** What isomorphic-git reads from a stat. */
export interface IsoGitStat {
  type: 'file' | 'dir'
  mode: number
  size: number
  ino: number
  mtimeMs: number
  ctimeMs: number
  uid: number
  gid: number
  dev: number
  isFile(): boolean
  isDirectory(): boolean
  isSymbolicLink(): boolean
}

/** An error shaped like Node's, which isomorphic-git tests by `code`. */
class FsError extends Error {
  readonly code: string
  constructor(code: string, path: string, cause?: unknown) {
    super(`${code}: ${path}`, cause === undefined ? undefined : { cause })
    this.code = code
  }
}

const ERRNO: Partial<Record<string, string>> = {
  not_found: 'ENOENT',
  is_directory: 'EISDIR',
  not_directory: 'ENOTDIR',
  not_empty: 'ENOTEMPTY',
  already_exists: 'EEXIST',
}

/** 32-bit FNV-1a of a string: turns a workspace version tag into a stat `ino`. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

const decoder = new TextDecoder()
const encoder = new TextEncoder()

/**
 * isomorphic-git's file system over the {@link WorkspaceServices} port, with the repository at
 * `/` (the workspace root). Every path goes through {@link WorkspacePath} containment.
 *
 * A stat's `ino` is derived from the workspace's version tag, which changes on every write, so
 * isomorphic-git's stat cache never mistakes a rewritten file (same size, same second) for an
 * unchanged one.
 */
export function workspaceGitFs(workspace: WorkspaceServices): IsoGitFs {
  const toPath = (path: string): WorkspacePath => {
    try {
      return WorkspacePath.parse(path.replace(/^\/+/, '') || '.')
    } catch (cause) {
      throw new FsError('ENOENT', path, cause)
    }
  }
  const wrap = async <T>(path: string, op: () => Promise<T>): Promise<T> => {
    try {
      return await op()
    } catch (error) {
      if (error instanceof FsError) throw error
      if (IsoagentError.is(error)) {
        const code = ERRNO[error.code]
        if (code !== undefined) throw new FsError(code, path, error)
      }
      throw error
    }
  }
  const statOf = (s: WorkspaceStat): IsoGitStat => {
    const dir = s.kind === 'directory'
    const mtimeMs = Math.floor(s.mtimeMs ?? 0)
    return {
      type: dir ? 'dir' : 'file',
      mode: dir ? 0o40000 : (s.mode ?? 0o644) & 0o111 ? 0o100755 : 0o100644,
      size: s.size,
      ino: fnv1a(s.version),
      mtimeMs,
      ctimeMs: mtimeMs,
      uid: 1,
      gid: 1,
      dev: 1,
      isFile: () => !dir,
      isDirectory: () => dir,
      isSymbolicLink: () => false,
    }
  }
  const stat = (path: string) =>
    wrap(path, async () => {
      const s = await workspace.stat(toPath(path))
      if (s === undefined) throw new FsError('ENOENT', path)
      return statOf(s)
    })
  return {
    promises: {
      readFile: (path, options) =>
        wrap(path, async () => {
          const bytes = await workspace.read(toPath(path))
          const encoding =
            typeof options === 'string'
              ? options
              : (options as { encoding?: string } | undefined)?.encoding
          return encoding === undefined ? bytes : decoder.decode(bytes)
        }),
      writeFile: (path, data) =>
        wrap(path, async () => {
          await workspace.write(
            toPath(path),
            typeof data === 'string' ? encoder.encode(data) : data,
          )
        }),
      unlink: (path) =>
        wrap(path, async () => {
          const p = toPath(path)
          const s = await workspace.stat(p)
          if (s === undefined) throw new FsError('ENOENT', path)
          if (s.kind === 'directory') throw new FsError('EISDIR', path)
          await workspace.remove(p)
        }),
      readdir: (path) =>
        wrap(path, async () => {
          const names: string[] = []
          let after: string | undefined
          for (;;) {
            const page = await workspace.list(toPath(path), { after, limit: 1000 })
            for (const entry of page.entries) names.push(entry.name)
            if (page.next === undefined) return names
            after = page.next
          }
        }),
      mkdir: (path) =>
        wrap(path, async () => {
          const p = toPath(path)
          if ((await workspace.stat(p)) !== undefined) throw new FsError('EEXIST', path)
          await workspace.mkdir(p)
        }),
      rmdir: (path) =>
        wrap(path, async () => {
          const p = toPath(path)
          const s = await workspace.stat(p)
          if (s === undefined) throw new FsError('ENOENT', path)
          if (s.kind !== 'directory') throw new FsError('ENOTDIR', path)
          if ((await workspace.list(p, { limit: 1 })).entries.length > 0)
            throw new FsError('ENOTEMPTY', path)
          await workspace.remove(p, { recursive: true })
        }),
      stat,
      lstat: stat,
      // The port has no symbolic links: nothing is ever one, and none can be made.
      readlink: async (path) => {
        throw new FsError('EINVAL', path)
      },
      symlink: async (_target, path) => {
        throw new FsError('EPERM', path)
      },
    },
  }
}
