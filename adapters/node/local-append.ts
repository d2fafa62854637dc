import {
  closeSync,
  constants as fsConstants,
  fstatSync,
  lstatSync,
  openSync,
  writeSync,
  type BigIntStats,
} from 'node:fs'
import nodeFs from 'node:fs'
import * as fs from 'node:fs/promises'
import { IsoagentError } from '../../src/errors.ts'
import { checkPrecondition, versionConflict } from '../../src/workspace/adapter-kit.ts'
import { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import type { AppendOptions, WriteOutcome } from '../../src/workspace/workspace-services.ts'
import { fromErrno, versionOf } from './local-files.ts'
import { escapeError, type PinnedDir } from './pinned-dir.ts'
import { lockedIn, pinParentOf, syncDir } from './local-write.ts'

// The append of a local workspace: holding the file's write lock (as a write does, see
// local-write.ts), the version is checked and the bytes are written at the end of the file,
// opened in its pinned directory without following a symlink. A durable append costs one
// fdatasync of the file (and of the directory only when the append created the file), where a
// durable write copies the whole file to a temp file and syncs it and the directory. With
// `syncIo` (the workspace's `syncMetadata`) the calls that take microseconds on a local disk are
// synchronous (a round trip through Node's thread pool costs more, far more on a loaded machine);
// only the fdatasync goes to the pool.

const O_NOFOLLOW = (fsConstants as { O_NOFOLLOW?: number }).O_NOFOLLOW ?? 0
const CREATE_FLAGS = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | O_NOFOLLOW
const APPEND_FLAGS = fsConstants.O_WRONLY | fsConstants.O_APPEND | O_NOFOLLOW

/** The file opened is not the one checked (replaced by a writer that does not take the lock). */
class ReplacedFile extends Error {}

/** What an append does to the file once it is checked: open, write, sync, stat, close. */
interface AppendIo {
  lstat(at: string): BigIntStats | undefined | Promise<BigIntStats | undefined>
  addTo(
    at: string,
    create: boolean,
    data: Uint8Array,
    durable: boolean,
    expected: string | null,
  ): Promise<BigIntStats>
}

/** Each step through Node's thread pool (for roots on network file systems). */
const asyncIo: AppendIo = {
  lstat: async (at) => {
    try {
      return await fs.lstat(at, { bigint: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  },
  async addTo(at, create, data, durable, expected) {
    const handle = await fs.open(at, create ? CREATE_FLAGS : APPEND_FLAGS)
    try {
      // The file opened must be the one checked (a writer without the lock may have replaced it).
      if (expected !== null && versionOf(await handle.stat({ bigint: true })) !== expected)
        throw new ReplacedFile()
      await handle.writeFile(data)
      if (durable) await handle.datasync()
      return await handle.stat({ bigint: true })
    } finally {
      await handle.close()
    }
  },
}

/** Synchronous calls but for the fdatasync, which runs in the pool. */
const syncIo: AppendIo = {
  lstat: (at) => lstatSync(at, { bigint: true, throwIfNoEntry: false }),
  async addTo(at, create, data, durable, expected) {
    const fd = openSync(at, create ? CREATE_FLAGS : APPEND_FLAGS)
    try {
      if (expected !== null && versionOf(fstatSync(fd, { bigint: true })) !== expected)
        throw new ReplacedFile()
      for (let done = 0; done < data.length;) done += writeSync(fd, data, done, data.length - done)
      if (durable)
        await new Promise<void>((resolve, reject) =>
          nodeFs.fdatasync(fd, (e) => (e ? reject(e) : resolve())),
        )
      return fstatSync(fd, { bigint: true })
    } finally {
      closeSync(fd)
    }
  },
}

/** Add `data` at the end of the entry `name` of `dir` (checked under the lock); its outcome. */
async function appendIn(
  io: AppendIo,
  dir: PinnedDir,
  name: string,
  path: WorkspacePath,
  data: Uint8Array,
  options: AppendOptions,
): Promise<WriteOutcome> {
  const current = await io.lstat(dir.at(name))
  if (current?.isSymbolicLink()) throw escapeError(path)
  if (current?.isDirectory())
    throw new IsoagentError('is_directory', `${path} is a directory`, { data: { path } })
  const version = current === undefined ? null : versionOf(current)
  checkPrecondition(path, version, options.precondition)
  if (options.signal?.aborted) throw new IsoagentError('cancelled', `append to ${path} cancelled`)
  let after: BigIntStats
  try {
    after = await io.addTo(
      dir.at(name),
      current === undefined,
      data,
      options.durable === true,
      version,
    )
  } catch (error) {
    if (error instanceof ReplacedFile) throw versionConflict(path, options.precondition, null)
    throw error
  }
  if (current === undefined && options.durable) await syncDir(dir)
  if (!dir.recheck()) throw escapeError(path)
  return { created: current === undefined, version: versionOf(after) }
}

/**
 * The append of a local workspace rooted at `realRoot`; `resolve` gives a path's checked real
 * location. See `WorkspaceServices.append`.
 */
export function localAppend(
  realRoot: string,
  resolve: (path: WorkspacePath) => string,
  options: { syncIo: boolean },
) {
  const io = options.syncIo ? syncIo : asyncIo
  return async function append(
    path: WorkspacePath,
    data: Uint8Array,
    appendOptions: AppendOptions = {},
  ): Promise<WriteOutcome> {
    const { real, name, dir } = pinParentOf(realRoot, resolve, path, appendOptions.createParents)
    try {
      return await lockedIn(dir, real, name, path, () =>
        appendIn(io, dir, name, path, data, appendOptions),
      )
    } catch (error) {
      throw fromErrno(error, path, 'write')
    } finally {
      dir.close()
    }
  }
}
