import {
  checkPrecondition,
  IsoagentError,
  WorkspacePath,
  type WriteOptions,
  type WriteOutcome,
} from '../../src/index.ts'
import {
  checkEntry,
  isDirectoryError as isDirectory,
  notFoundError as notFound,
} from '../../src/workspace/adapter-kit.ts'
import { fromFsError, notDirectory, show, throughSymlink } from './browser-errors.ts'
import { exclusive, nextStamp } from './browser-guard.ts'
import {
  abs,
  entry,
  kindOf,
  lstat,
  probeAncestors,
  versionOf,
  type BrowserFs,
  type LfsStat,
} from './browser-entries.ts'

// The write side of a browser workspace: writes through a temp file and a rename, mkdir,
// remove and rename, each saved (the superblock flushed) before it returns. Callers hold the
// guard's mutex (`serialised`).

function randomTag(): string {
  const bytes = new Uint8Array(6)
  crypto.getRandomValues(bytes)
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

/** A hidden name beside `path` for a temp or set-aside entry. */
function sibling(path: WorkspacePath, suffix: string): string {
  const parent = WorkspacePath.parent(path)
  const own = `.${WorkspacePath.basename(path)}.${randomTag()}.${suffix}`
  return parent === '' ? own : `${parent}/${own}`
}

/** Save the superblock (the directory tree) to IndexedDB. */
async function flush(b: BrowserFs, path: string, op: string): Promise<void> {
  try {
    await b.fs.flush()
  } catch (error) {
    throw fromFsError(error, path, op)
  }
}

async function discard(b: BrowserFs, path: string): Promise<void> {
  await b.fs.unlink(abs(path)).catch(() => undefined)
}

/** `mkdir -p`; returns the directories it created, outermost first. Serialised callers only. */
async function makeDirs(b: BrowserFs, path: WorkspacePath): Promise<string[]> {
  const segments = path === '' ? [] : path.split('/')
  const created: string[] = []
  let prefix = ''
  for (const segment of segments) {
    prefix = prefix === '' ? segment : `${prefix}/${segment}`
    const stat = await lstat(b, prefix)
    if (stat === undefined) {
      try {
        await b.fs.mkdir(abs(prefix))
      } catch (error) {
        throw fromFsError(error, prefix, 'mkdir')
      }
      created.push(prefix)
    } else if (stat.type === 'symlink') throw throughSymlink(path, prefix)
    else if (stat.type !== 'dir') throw notDirectory(path, prefix)
  }
  return created
}

/** `mkdir -p` of `path`, saved. */
export async function makeDir(b: BrowserFs, path: WorkspacePath): Promise<void> {
  await makeDirs(b, path)
  await flush(b, path, 'mkdir')
}

/**
 * Moves `from` over the existing file `to`: the old entry is set aside and the new one moved in
 * (two metadata moves with no reader in between), the superblock is flushed, and only then is
 * the old inode's data deleted (and the superblock flushed again). When the first flush fails
 * the swap is undone and `from` is back.
 */
async function replace(b: BrowserFs, from: string, to: WorkspacePath, op: string): Promise<void> {
  const { fs, guard } = b
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
    await flush(b, to, op)
  } catch (error) {
    await exclusive(guard, async () => {
      await fs.rename(abs(to), abs(from)).catch(() => undefined)
      await fs.rename(abs(aside), abs(to)).catch(() => undefined)
    })
    throw error
  }
  await discard(b, aside)
  // Saved again at once, or a page reloaded before lightning-fs's own delayed save would see
  // the set-aside entry, whose data is gone. The write has landed either way.
  await fs.flush().catch(() => undefined)
}

/** Write `bytes` to the temp entry `temp`, stamped, then move it to `path` and save. */
async function landWrite(
  b: BrowserFs,
  path: WorkspacePath,
  temp: string,
  bytes: Uint8Array,
  replacing: boolean,
  signal: AbortSignal | undefined,
): Promise<void> {
  const cancelled = () => new IsoagentError('cancelled', `write of ${path} cancelled`)
  if (signal?.aborted) throw cancelled()
  await b.fs.writeFile(abs(temp), bytes)
  const stamp = nextStamp(b.guard)
  await b.fs.utimes(abs(temp), stamp, stamp)
  if (signal?.aborted) throw cancelled()
  if (replacing) return replace(b, temp, path, 'write')
  await b.fs.rename(abs(temp), abs(path))
  try {
    await flush(b, path, 'write')
  } catch (error) {
    // The superblock that would hold the new file was not saved: take the file back out.
    await discard(b, path)
    throw error
  }
}

/** A write: checked against its precondition, landed whole, or nothing of it left behind. */
export async function put(
  b: BrowserFs,
  path: WorkspacePath,
  data: Uint8Array,
  options: WriteOptions,
): Promise<WriteOutcome> {
  const probe = await probeAncestors(b, path)
  if (probe.kind === 'symlink') throw throughSymlink(path, probe.at)
  if (probe.kind === 'file') throw notDirectory(path, probe.at)
  const current = probe.kind === 'ok' ? await lstat(b, path) : undefined
  checkEntry('write', path, current && kindOf(current))
  if (current?.type === 'symlink') throw throughSymlink(path, path)
  checkPrecondition(path, current === undefined ? null : versionOf(current), options.precondition)
  let createdDirs: string[] = []
  if (probe.kind === 'missing') {
    if (options.createParents === false) throw notFound(WorkspacePath.parent(path))
    createdDirs = await makeDirs(b, WorkspacePath.parent(path))
  }
  // IndexedDB clones the whole buffer behind a view: store exactly the bytes.
  const bytes =
    data.byteOffset === 0 && data.byteLength === data.buffer.byteLength
      ? data
      : new Uint8Array(data)
  const temp = sibling(path, 'isoagent-tmp')
  try {
    await landWrite(b, path, temp, bytes, current !== undefined, options.signal)
  } catch (error) {
    // Nothing of the write stays: the temp entry and its data, and directories made for it.
    await discard(b, temp)
    for (const dir of createdDirs.reverse()) await b.fs.rmdir(abs(dir)).catch(() => undefined)
    throw fromFsError(error, path, 'write')
  }
  const after = await lstat(b, path)
  return { created: current === undefined, version: after === undefined ? '' : versionOf(after) }
}

async function removeTree(b: BrowserFs, path: string): Promise<void> {
  for (const child of await b.fs.readdir(abs(path))) {
    const childPath = path === '' ? child : `${path}/${child}`
    const stat = await lstat(b, childPath)
    if (stat?.type === 'dir') await removeTree(b, childPath)
    else if (stat !== undefined) await b.fs.unlink(abs(childPath))
  }
  if (path !== '') await b.fs.rmdir(abs(path))
}

/** Remove the entry at `path` (not followed): a directory only when empty or `recursive`. */
export async function removeEntry(
  b: BrowserFs,
  path: WorkspacePath,
  options: { recursive?: boolean },
): Promise<void> {
  const stat = await entry(b, path, 'throw')
  checkEntry('remove', path, stat && kindOf(stat))
  try {
    if (stat!.type !== 'dir') await b.fs.unlink(abs(path))
    else if (options.recursive === true) await removeTree(b, path)
    else await b.fs.rmdir(abs(path))
  } catch (error) {
    throw fromFsError(error, path, 'remove')
  }
  await flush(b, path, 'remove')
}

/** Move the directory `from` onto the empty directory `to`. */
async function renameOntoDir(
  b: BrowserFs,
  from: WorkspacePath,
  to: WorkspacePath,
  target: LfsStat['type'],
): Promise<void> {
  if (target !== 'dir') throw notDirectory(to, to)
  if ((await b.fs.readdir(abs(to))).length > 0)
    throw new IsoagentError('not_empty', `rename ${show(to)}: not empty`, { data: { path: to } })
  await exclusive(b.guard, async () => {
    try {
      await b.fs.rmdir(abs(to))
      await b.fs.rename(abs(from), abs(to))
    } catch (error) {
      throw fromFsError(error, from, 'rename')
    }
  })
  await flush(b, to, 'rename')
}

/** Move `from` to `to` (parents made): onto nothing, an empty directory, or a file it replaces. */
export async function renameEntry(
  b: BrowserFs,
  from: WorkspacePath,
  to: WorkspacePath,
): Promise<void> {
  if (from === '' || to === '')
    throw new IsoagentError('invalid_argument', 'cannot rename the workspace root', {
      data: { from, to },
    })
  if (to === from) return
  const source = await entry(b, from, 'throw')
  if (source === undefined) throw notFound(from)
  if (to.startsWith(from + '/'))
    throw new IsoagentError(
      'invalid_argument',
      `cannot move ${show(from)} into itself (${show(to)})`,
      { data: { from, to } },
    )
  await makeDirs(b, WorkspacePath.parent(to))
  const target = await lstat(b, to)
  if (target === undefined) {
    try {
      await b.fs.rename(abs(from), abs(to))
    } catch (error) {
      throw fromFsError(error, from, 'rename')
    }
    await flush(b, to, 'rename')
    return
  }
  if (source.type === 'dir') return renameOntoDir(b, from, to, target.type)
  if (target.type === 'dir') throw isDirectory(to)
  await replace(b, from, to, 'rename')
}
