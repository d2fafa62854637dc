import { constants as fsConstants, type BigIntStats } from 'node:fs'
import * as fs from 'node:fs/promises'
import * as nodePath from 'node:path'
import { IsoagentError } from '../../src/errors.ts'
import { checkPrecondition } from '../../src/workspace/adapter-kit.ts'
import { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import type { WriteOptions, WriteOutcome } from '../../src/workspace/workspace-services.ts'
import { fromErrno, versionOf } from './local-files.ts'
import { escapeError, pinDir, type PinnedDir } from './pinned-dir.ts'
import { breakNameFor, lockNameFor, TEMP_SUFFIX, tempNameFor } from './side-files.ts'
import { withWriteLock } from './write-lock.ts'

// The write of a local workspace: the new bytes go to a temp file in the target's directory
// (pinned by descriptor, so a folder swapped for a symlink cannot redirect it), then, holding the
// file's write lock (see write-lock.ts), the version is checked and the temp file renamed over
// the target. The check and the rename cannot interleave with another writer's, in this process
// or another.

const O_NOFOLLOW = (fsConstants as { O_NOFOLLOW?: number }).O_NOFOLLOW ?? 0
const CREATE_FLAGS = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | O_NOFOLLOW

/** A random suffix for a temp file's name (node:crypto loads at the first write, not at start). */
let nodeCrypto: Promise<typeof import('node:crypto')> | undefined
export async function randomSuffix(): Promise<string> {
  return (await (nodeCrypto ??= import('node:crypto'))).randomBytes(6).toString('hex')
}

/**
 * fsync a directory, so a rename in it is on stable storage; best effort, as in
 * local-temp-files.ts (some file systems refuse to open or sync a directory).
 */
export async function syncDir(dir: PinnedDir): Promise<void> {
  const handle = await fs.open(dir.at('.'), 'r').catch(() => undefined)
  if (handle === undefined) return
  await handle.sync().catch(() => undefined)
  await handle.close().catch(() => undefined)
}

/** The entry `name` of `dir` without following it, or undefined when absent. */
export async function lstatIn(dir: PinnedDir, name: string): Promise<BigIntStats | undefined> {
  try {
    return await fs.lstat(dir.at(name), { bigint: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/** Run `run` holding the write lock of the entry `name` of `dir` (real path `real`). */
export function lockedIn<T>(
  dir: PinnedDir,
  real: string,
  name: string,
  path: string,
  run: () => Promise<T>,
): Promise<T> {
  return withWriteLock(
    real,
    () => ({ lock: dir.at(lockNameFor(name)), breakLock: dir.at(breakNameFor(name)) }),
    WorkspacePath.display(path as WorkspacePath),
    run,
  )
}

/**
 * The file at `path` about to be written or appended: its checked real location, its name and
 * its parent directory pinned by descriptor (created unless `createParents` is false). The
 * workspace root is a directory, never a file.
 */
export function pinParentOf(
  realRoot: string,
  resolve: (path: WorkspacePath) => string,
  path: WorkspacePath,
  createParents: boolean | undefined,
): { real: string; name: string; dir: PinnedDir } {
  if (path === '') throw new IsoagentError('is_directory', 'the workspace root is a directory')
  const real = resolve(path)
  try {
    const dir = pinDir(realRoot, nodePath.dirname(real), createParents !== false, path)
    return { real, name: nodePath.basename(real), dir }
  } catch (error) {
    throw fromErrno(error, WorkspacePath.parent(path), 'mkdir')
  }
}

/**
 * The write of a local workspace rooted at `realRoot`; `resolve` gives a path's checked real
 * location.
 */
export function localWrite(realRoot: string, resolve: (path: WorkspacePath) => string) {
  return async function write(
    path: WorkspacePath,
    data: Uint8Array,
    options: WriteOptions = {},
  ): Promise<WriteOutcome> {
    const { real, name, dir } = pinParentOf(realRoot, resolve, path, options.createParents)
    const temp = dir.at(tempNameFor(name, TEMP_SUFFIX, await randomSuffix()))
    let placed = false
    try {
      const handle = await fs.open(temp, CREATE_FLAGS, 0o666)
      let tempIno: bigint
      try {
        await handle.writeFile(data)
        if (options.durable) await handle.sync()
        tempIno = (await handle.stat({ bigint: true })).ino
      } finally {
        await handle.close()
      }
      return await lockedIn(dir, real, name, path, async () => {
        const current = await lstatIn(dir, name)
        if (current?.isSymbolicLink()) throw escapeError(path)
        if (current?.isDirectory())
          throw new IsoagentError('is_directory', `${path} is a directory`, { data: { path } })
        checkPrecondition(
          path,
          current === undefined ? null : versionOf(current),
          options.precondition,
        )
        if (current !== undefined) await fs.chmod(temp, Number(current.mode) & 0o7777)
        if (options.signal?.aborted)
          throw new IsoagentError('cancelled', `write of ${path} cancelled`)
        await fs.rename(temp, dir.at(name))
        placed = true
        if (options.durable) await syncDir(dir)
        const after = await lstatIn(dir, name)
        if (!dir.recheck()) {
          // The directory left the root meanwhile: take back the file, when it is still ours.
          if (after?.ino === tempIno) await fs.unlink(dir.at(name)).catch(() => undefined)
          throw escapeError(path)
        }
        return { created: current === undefined, version: after ? versionOf(after) : '' }
      })
    } catch (error) {
      throw fromErrno(error, path, 'write')
    } finally {
      if (!placed) await fs.rm(temp, { force: true }).catch(() => {})
      dir.close()
    }
  }
}
