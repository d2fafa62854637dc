import { constants as fsConstants } from 'node:fs'
import * as fs from 'node:fs/promises'
import * as nodePath from 'node:path'
import { IsoagentError } from '../../src/errors.ts'
import { checkPrecondition, versionConflict } from '../../src/workspace/adapter-kit.ts'
import { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import type { AppendOptions, WriteOutcome } from '../../src/workspace/workspace-services.ts'
import { fromErrno, versionOf } from './local-files.ts'
import { escapeError, pinDir, type PinnedDir } from './pinned-dir.ts'
import { lockedIn, lstatIn, syncDir } from './local-write.ts'

// The append of a local workspace: holding the file's write lock (as a write does, see
// local-write.ts), the version is checked and the bytes are written at the end of the file,
// opened in its pinned directory without following a symlink. A durable append costs one
// fdatasync of the file (and of the directory only when the append created the file), where a
// durable write copies the whole file to a temp file and syncs it and the directory.

const O_NOFOLLOW = (fsConstants as { O_NOFOLLOW?: number }).O_NOFOLLOW ?? 0
const CREATE_FLAGS = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | O_NOFOLLOW
const APPEND_FLAGS = fsConstants.O_WRONLY | fsConstants.O_APPEND | O_NOFOLLOW

/** Add `data` at the end of the entry `name` of `dir` (checked under the lock); its outcome. */
async function appendIn(
  dir: PinnedDir,
  name: string,
  path: WorkspacePath,
  data: Uint8Array,
  options: AppendOptions,
): Promise<WriteOutcome> {
  const current = await lstatIn(dir, name)
  if (current?.isSymbolicLink()) throw escapeError(path)
  if (current?.isDirectory())
    throw new IsoagentError('is_directory', `${path} is a directory`, { data: { path } })
  const version = current === undefined ? null : versionOf(current)
  checkPrecondition(path, version, options.precondition)
  if (options.signal?.aborted) throw new IsoagentError('cancelled', `append to ${path} cancelled`)
  const handle = await fs.open(dir.at(name), current === undefined ? CREATE_FLAGS : APPEND_FLAGS)
  let after
  try {
    // The file opened must be the one checked (a writer without the lock may have replaced it).
    const opened = await handle.stat({ bigint: true })
    if (current !== undefined && versionOf(opened) !== version)
      throw versionConflict(path, options.precondition, versionOf(opened))
    await handle.writeFile(data)
    if (options.durable) await handle.datasync()
    after = await handle.stat({ bigint: true })
  } finally {
    await handle.close()
  }
  if (current === undefined && options.durable) await syncDir(dir)
  if (!dir.recheck()) throw escapeError(path)
  return { created: current === undefined, version: versionOf(after) }
}

/**
 * The append of a local workspace rooted at `realRoot`; `resolve` gives a path's checked real
 * location. See `WorkspaceServices.append`.
 */
export function localAppend(realRoot: string, resolve: (path: WorkspacePath) => string) {
  return async function append(
    path: WorkspacePath,
    data: Uint8Array,
    options: AppendOptions = {},
  ): Promise<WriteOutcome> {
    if (path === '') throw new IsoagentError('is_directory', 'the workspace root is a directory')
    const real = resolve(path)
    const name = nodePath.basename(real)
    let dir: PinnedDir
    try {
      dir = pinDir(realRoot, nodePath.dirname(real), options.createParents !== false, path)
    } catch (error) {
      throw fromErrno(error, WorkspacePath.parent(path), 'mkdir')
    }
    try {
      return await lockedIn(dir, real, name, path, () => appendIn(dir, name, path, data, options))
    } catch (error) {
      throw fromErrno(error, path, 'write')
    } finally {
      dir.close()
    }
  }
}
