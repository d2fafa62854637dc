import {
  closeSync,
  constants as fsConstants,
  existsSync,
  mkdirSync,
  openSync,
  readlinkSync,
  realpathSync,
} from 'node:fs'
import * as nodePath from 'node:path'
import { IsoagentError } from '../../src/errors.ts'
import { WorkspacePath } from '../../src/workspace/workspace-path.ts'

// A directory opened once and checked to lie inside the root, whose entries are then reached
// through its descriptor: on Linux `/proc/self/fd/<fd>/<name>` resolves the directory the
// descriptor holds, not a name, so swapping a folder on the way for a symlink afterwards changes
// nothing (what openat(2) gives, which Node lacks). Elsewhere entries are reached by name and the
// directory is checked again after the change (see `recheck`).

const O_NOFOLLOW = (fsConstants as { O_NOFOLLOW?: number }).O_NOFOLLOW ?? 0
const O_DIRECTORY = (fsConstants as { O_DIRECTORY?: number }).O_DIRECTORY ?? 0

/** Whether descriptors can be followed through /proc (Linux with /proc mounted). */
export const PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd')

/** Where the file descriptor `fd` lies (its real path), or undefined where it cannot be told. */
export function pathOfFd(fd: number): string | undefined {
  if (!PROC_FD) return undefined
  try {
    return readlinkSync(`/proc/self/fd/${fd}`)
  } catch {
    return undefined
  }
}

/** Whether the real path `real` is `realRoot` or below it. */
export const inside = (realRoot: string, real: string) =>
  real === realRoot ||
  real.startsWith(realRoot.endsWith(nodePath.sep) ? realRoot : realRoot + nodePath.sep)

/** A directory inside the root, pinned for the length of one change. */
export interface PinnedDir {
  /** Its real path when it was pinned. */
  readonly real: string
  /** A path that reaches the entry `name` of this very directory. */
  at(name: string): string
  /** Whether it still lies inside the root (always true where it is held by descriptor). */
  recheck(): boolean
  /** Let go of it. */
  close(): void
}

export function escapeError(path: string): IsoagentError {
  return new IsoagentError(
    'path_escape',
    `${WorkspacePath.display(path as WorkspacePath)} resolves outside the workspace through a symlink`,
    { data: { path } },
  )
}

function openDir(path: string): number {
  return openSync(path, fsConstants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
}

/** Open `real` below `realRoot` one component at a time from the root, creating missing ones. */
function walkOpen(realRoot: string, real: string, create: boolean): number {
  let fd = openDir(realRoot)
  try {
    const rel = nodePath.relative(realRoot, real)
    for (const name of rel === '' ? [] : rel.split(nodePath.sep)) {
      const at = `/proc/self/fd/${fd}/${name}`
      let next: number
      try {
        next = openDir(at)
      } catch (error) {
        if (!create || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
        try {
          mkdirSync(at)
        } catch (made) {
          if ((made as NodeJS.ErrnoException).code !== 'EEXIST') throw made
        }
        next = openDir(at)
      }
      closeSync(fd)
      fd = next
    }
    return fd
  } catch (error) {
    closeSync(fd)
    throw error
  }
}

/**
 * Pin the directory whose real path is `real` (inside `realRoot`), creating it and its missing
 * parents when `create`. `path` is the workspace path named in errors. Throws `path_escape` when
 * the directory opened is not inside the root (a folder swapped for a symlink meanwhile), and the
 * errno of a failed open otherwise (ENOENT, ENOTDIR, ELOOP).
 */
export function pinDir(realRoot: string, real: string, create: boolean, path: string): PinnedDir {
  if (!inside(realRoot, real)) throw escapeError(path)
  if (!PROC_FD) return pinByName(realRoot, real, create, path)
  let fd: number
  try {
    fd = openDir(real)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ELOOP') throw escapeError(path)
    if (code !== 'ENOENT') throw error
    fd = walkOpen(realRoot, real, create)
  }
  const where = pathOfFd(fd)
  if (where === undefined || !inside(realRoot, where)) {
    closeSync(fd)
    throw escapeError(path)
  }
  let open = true
  return {
    real,
    at: (name) => `/proc/self/fd/${fd}/${name}`,
    recheck: () => {
      const now = pathOfFd(fd)
      return now !== undefined && inside(realRoot, now)
    },
    close: () => {
      if (open) closeSync(fd)
      open = false
    },
  }
}

/** Without /proc: entries by name, the directory's real path checked before and after. */
function pinByName(realRoot: string, real: string, create: boolean, path: string): PinnedDir {
  if (create) mkdirSync(real, { recursive: true })
  const check = () => {
    try {
      return realpathSync.native(real) === real
    } catch {
      return false
    }
  }
  if (!check()) throw escapeError(path)
  return { real, at: (name) => nodePath.join(real, name), recheck: check, close: () => {} }
}
