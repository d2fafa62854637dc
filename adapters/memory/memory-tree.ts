import {
  checkPrecondition,
  IsoagentError,
  pageOfNames,
  WorkspacePath,
  type ByteRange,
  type EntryKind,
  type ListOptions,
  type ListPage,
  type WorkspaceStat,
  type WriteOptions,
  type WriteOutcome,
} from '../../src/index.ts'
import {
  checkEntry,
  clipRange,
  isDirectoryError,
  notDirectoryError,
  notFoundError,
} from '../../src/workspace/adapter-kit.ts'

// The files and directories of a memory workspace, and each operation on them.

interface MemoryFile {
  data: Uint8Array
  version: number
  mtimeMs: number
}

/** A memory workspace's tree: files by path, each directory's names, and the version clock. */
export interface MemoryTree {
  readonly files: Map<string, MemoryFile>
  readonly dirs: Map<string, Set<string>>
  clock: number
}

/** An empty tree: the root directory only. */
export function emptyTree(): MemoryTree {
  return { files: new Map(), dirs: new Map([['', new Set()]]), clock: 0 }
}

/** What is at `path`: a file, a directory, or nothing. */
function kindAt(tree: MemoryTree, path: string): EntryKind | undefined {
  return tree.files.has(path) ? 'file' : tree.dirs.has(path) ? 'directory' : undefined
}

/** `mkdir -p`: `path` and its missing parents; a file on the way is `not_directory`. */
export function ensureDir(tree: MemoryTree, path: string): void {
  if (tree.dirs.has(path)) return
  if (tree.files.has(path)) throw notDirectoryError(path)
  const parent = WorkspacePath.parent(path as WorkspacePath)
  ensureDir(tree, parent)
  tree.dirs.get(parent)!.add(WorkspacePath.basename(path as WorkspacePath))
  tree.dirs.set(path, new Set())
}

/** Bytes `range` of the file at `path` (a copy), clipped to it. */
export function readFile(tree: MemoryTree, path: string, range: ByteRange = {}): Uint8Array {
  const file = tree.files.get(path)
  if (file === undefined) throw tree.dirs.has(path) ? isDirectoryError(path) : notFoundError(path)
  return file.data.slice(...clipRange(range, file.data.length))
}

/** Store a copy of `data` at `path` as a new version, when its precondition holds. */
export function put(
  tree: MemoryTree,
  path: WorkspacePath,
  data: Uint8Array,
  options: WriteOptions = {},
): WriteOutcome {
  checkEntry('write', path, kindAt(tree, path))
  const existing = tree.files.get(path)
  checkPrecondition(
    path,
    existing === undefined ? null : String(existing.version),
    options.precondition,
  )
  const parent = WorkspacePath.parent(path)
  if (!tree.dirs.has(parent)) {
    if (options.createParents === false) throw notFoundError(parent)
    ensureDir(tree, parent)
  }
  tree.dirs.get(parent)!.add(WorkspacePath.basename(path))
  const version = ++tree.clock
  tree.files.set(path, { data: data.slice(), version, mtimeMs: Date.now() })
  return { created: existing === undefined, version: String(version) }
}

/** Facts about `path`, or undefined when nothing is there. */
export function statOf(tree: MemoryTree, path: WorkspacePath): WorkspaceStat | undefined {
  const file = tree.files.get(path)
  if (file !== undefined) {
    return {
      path,
      kind: 'file',
      size: file.data.length,
      mtimeMs: file.mtimeMs,
      version: String(file.version),
    }
  }
  if (tree.dirs.has(path)) return { path, kind: 'directory', size: 0, version: 'dir' }
  return undefined
}

/** One page of the directory at `path`. */
export function listPage(
  tree: MemoryTree,
  path: WorkspacePath,
  options: ListOptions = {},
): ListPage {
  checkEntry('list', path, kindAt(tree, path))
  const children = tree.dirs.get(path)!
  const { names: slice, next } = pageOfNames([...children].sort(), options.after, options.limit)
  const entries = slice.map((name) => {
    const file = tree.files.get(WorkspacePath.child(path, name))
    return file === undefined
      ? { name, kind: 'directory' as const }
      : { name, kind: 'file' as const, size: file.data.length }
  })
  return next === undefined ? { entries } : { entries, next }
}

/** Remove a file, or a directory that is empty or `recursive`, with all below it. */
export function remove(
  tree: MemoryTree,
  path: WorkspacePath,
  options: { recursive?: boolean } = {},
): void {
  checkEntry('remove', path, kindAt(tree, path))
  const parent = WorkspacePath.parent(path)
  const name = WorkspacePath.basename(path)
  if (tree.files.delete(path)) {
    tree.dirs.get(parent)?.delete(name)
    return
  }
  const children = tree.dirs.get(path)!
  if (children.size > 0 && !options.recursive) {
    throw new IsoagentError('not_empty', `${path} is not empty`, { data: { path } })
  }
  const prefix = path + '/'
  for (const key of [...tree.files.keys()]) if (key.startsWith(prefix)) tree.files.delete(key)
  for (const key of [...tree.dirs.keys()])
    if (key === path || key.startsWith(prefix)) tree.dirs.delete(key)
  tree.dirs.get(parent)?.delete(name)
}

/** Move the file `from` to `to`; directories are not moved (`unsupported`). */
export function rename(tree: MemoryTree, from: WorkspacePath, to: WorkspacePath): void {
  const file = tree.files.get(from)
  if (file === undefined) {
    if (tree.dirs.has(from))
      throw new IsoagentError(
        'unsupported',
        'renaming directories is not supported in memory workspaces',
      )
    throw notFoundError(from)
  }
  put(tree, to, file.data)
  tree.files.delete(from)
  tree.dirs.get(WorkspacePath.parent(from))?.delete(WorkspacePath.basename(from))
}
