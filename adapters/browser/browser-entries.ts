import type LightningFS from '@isomorphic-git/lightning-fs'
import {
  IsoagentError,
  pageOfNames,
  WorkspacePath,
  type ByteRange,
  type DirEntry,
  type EntryKind,
  type ListOptions,
  type ListPage,
  type WorkspaceStat,
} from '../../src/index.ts'
import {
  checkEntry,
  clipRange,
  isDirectoryError as isDirectory,
  notFoundError as notFound,
} from '../../src/workspace/adapter-kit.ts'
import { fromFsError, notDirectory, show, throughSymlink } from './browser-errors.ts'
import type { Guard } from './browser-guard.ts'

// The read side of a browser workspace: entries looked at without following anything, stat,
// whole-file reads and listings, and the context object every operation works on.

/** One browser workspace: its lightning-fs, the guard of its name, its stream chunk size. */
export interface BrowserFs {
  /** The file-system name (the IndexedDB database). */
  readonly name: string
  readonly fs: LightningFS['promises']
  readonly guard: Guard
  /** Chunk size of streamed reads. */
  readonly chunkBytes: number
}

/** What lightning-fs's `stat`/`lstat` really return (its typings omit `symlink`). */
export interface LfsStat {
  type: 'file' | 'dir' | 'symlink'
  mode: number
  size: number
  ino: number
  mtimeMs: number
}

/** The lightning-fs path of a workspace path: the workspace root is the file system's `/`. */
export const abs = (path: string) => '/' + path

export function kindOf(stat: LfsStat): EntryKind {
  return stat.type === 'file'
    ? 'file'
    : stat.type === 'dir'
      ? 'directory'
      : stat.type === 'symlink'
        ? 'symlink'
        : 'other'
}

/**
 * Content-independent version of an entry. Every write lands as a new inode (temp file +
 * rename; lightning-fs numbers a new inode above every existing one) stamped with an mtime that
 * strictly increases per file-system name in this page, so it changes on every write.
 */
export function versionOf(stat: LfsStat): string {
  if (stat.type === 'dir') return `d:${stat.ino}`
  return `${stat.type === 'file' ? 'f' : 'l'}:${stat.ino}:${stat.mtimeMs}:${stat.size}`
}

/** The entry at `path` itself (not followed), or undefined when nothing is there. */
export async function lstat(b: BrowserFs, path: string): Promise<LfsStat | undefined> {
  try {
    return (await b.fs.lstat(abs(path))) as unknown as LfsStat
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ENOENT') return undefined
    throw fromFsError(error, path, 'stat')
  }
}

/**
 * Walks the ancestors of `path` without following anything: what the first one that is not a
 * directory is, if any.
 */
export async function probeAncestors(
  b: BrowserFs,
  path: WorkspacePath,
): Promise<{ kind: 'ok' } | { kind: 'missing' | 'file' | 'symlink'; at: string }> {
  const segments = path === '' ? [] : path.split('/')
  let prefix = ''
  for (let i = 0; i < segments.length - 1; i++) {
    prefix = prefix === '' ? segments[i]! : `${prefix}/${segments[i]}`
    const stat = await lstat(b, prefix)
    if (stat === undefined) return { kind: 'missing', at: prefix }
    if (stat.type === 'symlink') return { kind: 'symlink', at: prefix }
    if (stat.type !== 'dir') return { kind: 'file', at: prefix }
  }
  return { kind: 'ok' }
}

/** The entry at `path` itself (not followed), or undefined; throws for symlinked ancestors. */
export async function entry(
  b: BrowserFs,
  path: WorkspacePath,
  throughFile: 'undefined' | 'throw',
): Promise<LfsStat | undefined> {
  const probe = await probeAncestors(b, path)
  if (probe.kind === 'symlink') throw throughSymlink(path, probe.at)
  if (probe.kind === 'file' && throughFile === 'throw') throw notDirectory(path, probe.at)
  if (probe.kind !== 'ok') return undefined
  return lstat(b, path)
}

/** Facts about `path` (not followed), or undefined when nothing is there. */
export async function statEntry(
  b: BrowserFs,
  path: WorkspacePath,
): Promise<WorkspaceStat | undefined> {
  const stat = await entry(b, path, 'undefined')
  if (stat === undefined) return undefined
  const kind = kindOf(stat)
  return {
    path,
    kind,
    size: kind === 'file' ? stat.size : 0,
    mtimeMs: stat.mtimeMs,
    mode: stat.mode & 0o7777,
    version: versionOf(stat),
  }
}

/** The whole file at `path`: lightning-fs stores a file as one IndexedDB value. */
async function readWhole(b: BrowserFs, path: WorkspacePath): Promise<Uint8Array> {
  const stat = await entry(b, path, 'throw')
  if (stat === undefined) throw notFound(path)
  if (stat.type === 'dir') throw isDirectory(path)
  if (stat.type === 'symlink') throw throughSymlink(path, path)
  let data: Uint8Array | undefined
  try {
    data = (await b.fs.readFile(abs(path))) as Uint8Array | undefined
  } catch (error) {
    throw fromFsError(error, path, 'read')
  }
  if (!(data instanceof Uint8Array)) {
    if (data === undefined || data === null) {
      throw new IsoagentError(
        'io',
        `read ${show(path)} failed: its data is missing from IndexedDB (a write or removal was interrupted)`,
        { data: { path } },
      )
    }
    data = new Uint8Array(data as ArrayBufferLike)
  }
  // A fresh view: lightning-fs hangs an own `toString` on the array it returns.
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
}

/** Bytes `range` of the file at `path`, sliced from the whole file in memory. */
export async function readRange(
  b: BrowserFs,
  path: WorkspacePath,
  range: ByteRange | undefined,
): Promise<Uint8Array> {
  const data = await readWhole(b, path)
  if (range === undefined || (range.offset === undefined && range.length === undefined)) return data
  return data.slice(...clipRange(range, data.length))
}

/** `data` as a stream of chunks of at most `chunkBytes`. */
export function chunkStream(data: Uint8Array, chunkBytes: number): ReadableStream<Uint8Array> {
  let at = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at < data.length) {
        const end = Math.min(data.length, at + chunkBytes)
        controller.enqueue(data.subarray(at, end))
        at = end
      }
      if (at >= data.length) controller.close()
    },
  })
}

/** One page of the directory at `path`; symlinks are listed, never followed. */
export async function listDir(
  b: BrowserFs,
  path: WorkspacePath,
  listOptions: ListOptions,
): Promise<ListPage> {
  if (listOptions.signal?.aborted)
    throw new IsoagentError('cancelled', `listing ${show(path)} cancelled`)
  const stat = await entry(b, path, 'throw')
  if (stat?.type === 'symlink') throw throughSymlink(path, path)
  checkEntry('list', path, stat && kindOf(stat))
  let names: string[]
  try {
    names = (await b.fs.readdir(abs(path))).sort()
  } catch (error) {
    throw fromFsError(error, path, 'list')
  }
  const { names: slice, next } = pageOfNames(names, listOptions.after, listOptions.limit)
  const entries: DirEntry[] = []
  for (const child of slice) {
    const s = await lstat(b, WorkspacePath.child(path, child))
    if (s === undefined) continue // removed while listing
    const kind = kindOf(s)
    entries.push(kind === 'file' ? { name: child, kind, size: s.size } : { name: child, kind })
  }
  return next === undefined ? { entries } : { entries, next }
}
