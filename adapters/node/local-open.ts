import { closeSync, constants as fsConstants, fstatSync, openSync, statSync } from 'node:fs'
import * as fs from 'node:fs/promises'
import { IsoagentError } from '../../src/errors.ts'
import { isDirectoryError } from '../../src/workspace/adapter-kit.ts'
import { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import { belowCachedParent } from './local-dir-cache.ts'
import { fromErrno } from './local-errno.ts'
import { resolve, type LocalRoot } from './local-resolve.ts'
import { escapeError, inside, pathOfFd, PROC_FD } from './pinned-dir.ts'

// Opening a local workspace's files for reading, checked to land inside the root.

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
function checkOpened(root: LocalRoot, fd: number, path: WorkspacePath): void {
  let ok: boolean
  if (PROC_FD) {
    const where = pathOfFd(fd)
    ok = where !== undefined && inside(root.realRoot, where)
  } else {
    try {
      const opened = fstatSync(fd)
      const named = statSync(resolve(root, path))
      ok = opened.dev === named.dev && opened.ino === named.ino
    } catch {
      ok = false
    }
  }
  if (!ok) throw escapeError(path)
}

/** Open the resolved location of `path` for reading. */
function openResolved(root: LocalRoot, path: WorkspacePath): number {
  try {
    return openSync(resolve(root, path), READ_FLAGS)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw escapeError(path)
    throw error
  }
}

/** Open for reading with synchronous calls and check where the descriptor landed. */
export function openSyncForRead(root: LocalRoot, path: WorkspacePath): number {
  const candidate = belowCachedParent(root, path)
  let fd: number | undefined
  if (candidate !== undefined) {
    try {
      fd = openSync(candidate, READ_FLAGS)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ELOOP' && code !== 'ENOENT') throw error
    }
  }
  fd ??= openResolved(root, path)
  try {
    checkOpened(root, fd, path)
  } catch (error) {
    closeSync(fd)
    throw error
  }
  return fd
}

/** Open `path` for reading (see {@link READ_FLAGS}) and check where it landed. */
export async function openFile(root: LocalRoot, path: WorkspacePath): Promise<fs.FileHandle> {
  let handle: fs.FileHandle
  try {
    handle = await fs.open(resolve(root, path), READ_FLAGS)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw escapeError(path)
    throw fromErrno(error, path, 'open')
  }
  try {
    checkOpened(root, handle.fd, path)
  } catch (error) {
    await handle.close().catch(() => undefined)
    throw error
  }
  return handle
}

/** A directory is_directory; a FIFO, socket or device invalid_argument; a file passes. */
export function checkRegular(
  s: { isDirectory(): boolean; isFile(): boolean },
  path: WorkspacePath,
): void {
  if (s.isDirectory()) throw isDirectoryError(path)
  if (!s.isFile())
    throw new IsoagentError(
      'invalid_argument',
      `${WorkspacePath.display(path)} is not a regular file (a FIFO, socket or device); only regular files are read`,
      { data: { path } },
    )
}
