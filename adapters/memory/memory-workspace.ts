import {
  checkPrecondition,
  IsoagentError,
  pageOfNames,
  WorkspacePath,
  type ByteRange,
  type ListOptions,
  type ListPage,
  type WorkspaceServices,
  type WorkspaceStat,
  type WriteOptions,
  type WriteOutcome,
} from '../../src/index.ts'
import {
  clipRange,
  isDirectoryError,
  notDirectoryError,
  notFoundError,
} from '../../src/workspace/adapter-kit.ts'

interface MemoryFile {
  data: Uint8Array
  version: number
  mtimeMs: number
}

/**
 * A workspace held in memory: runs everywhere (Node, workerd, browsers). Writes are atomic and
 * preconditions are checked atomically (single-threaded), so `conditionalWrite` is true.
 */
export function memoryWorkspace(
  initial: Record<string, string | Uint8Array> = {},
): WorkspaceServices {
  const files = new Map<string, MemoryFile>()
  const dirs = new Map<string, Set<string>>([['', new Set()]])
  let clock = 0
  const encoder = new TextEncoder()

  function ensureDir(path: string): void {
    if (dirs.has(path)) return
    if (files.has(path)) throw notDirectoryError(path)
    const parent = WorkspacePath.parent(path as WorkspacePath)
    ensureDir(parent)
    dirs.get(parent)!.add(WorkspacePath.basename(path as WorkspacePath))
    dirs.set(path, new Set())
  }

  function fileOf(path: string): MemoryFile {
    const file = files.get(path)
    if (file !== undefined) return file
    if (dirs.has(path)) throw isDirectoryError(path)
    throw notFoundError(path)
  }

  function clip(data: Uint8Array, range: ByteRange = {}): Uint8Array {
    return data.slice(...clipRange(range, data.length))
  }

  function put(path: WorkspacePath, data: Uint8Array, options: WriteOptions = {}): WriteOutcome {
    if (path === '') throw new IsoagentError('is_directory', 'the workspace root is a directory')
    if (dirs.has(path)) throw isDirectoryError(path)
    const existing = files.get(path)
    checkPrecondition(
      path,
      existing === undefined ? null : String(existing.version),
      options.precondition,
    )
    const parent = WorkspacePath.parent(path)
    if (!dirs.has(parent)) {
      if (options.createParents === false) throw notFoundError(parent)
      ensureDir(parent)
    }
    dirs.get(parent)!.add(WorkspacePath.basename(path))
    const version = ++clock
    files.set(path, { data: data.slice(), version, mtimeMs: Date.now() })
    return { created: existing === undefined, version: String(version) }
  }

  for (const [name, content] of Object.entries(initial)) {
    put(WorkspacePath.parse(name), typeof content === 'string' ? encoder.encode(content) : content)
  }

  function listPage(path: WorkspacePath, options: ListOptions = {}): ListPage {
    const children = dirs.get(path)
    if (children === undefined) {
      if (files.has(path))
        throw new IsoagentError('not_directory', `${path} is a file`, { data: { path } })
      throw notFoundError(path)
    }
    const { names: slice, next } = pageOfNames([...children].sort(), options.after, options.limit)
    const entries = slice.map((name) => {
      const child = WorkspacePath.child(path, name)
      const file = files.get(child)
      return file === undefined
        ? { name, kind: 'directory' as const }
        : { name, kind: 'file' as const, size: file.data.length }
    })
    return next === undefined ? { entries } : { entries, next }
  }

  return {
    capabilities: {
      read: true,
      write: true,
      exec: false,
      git: true,
      search: true,
      atomicRename: true,
      conditionalWrite: true,
      symlinks: false,
    },
    descriptor: { kind: 'memory' },
    async stat(path): Promise<WorkspaceStat | undefined> {
      const file = files.get(path)
      if (file !== undefined) {
        return {
          path,
          kind: 'file',
          size: file.data.length,
          mtimeMs: file.mtimeMs,
          version: String(file.version),
        }
      }
      if (dirs.has(path)) return { path, kind: 'directory', size: 0, version: 'dir' }
      return undefined
    },
    async read(path, range) {
      return clip(fileOf(path).data, range)
    },
    readNow(path, range, into) {
      const bytes = clip(fileOf(path).data, range)
      // Into the caller's buffer when it fits: a search reads into memory its kernels search.
      if (into === undefined || bytes.length > into.length) return bytes
      into.set(bytes)
      return into.subarray(0, bytes.length)
    },
    async readStream(path, range) {
      const data = clip(fileOf(path).data, range)
      return new ReadableStream<Uint8Array>({
        start(controller) {
          if (data.length > 0) controller.enqueue(data)
          controller.close()
        },
      })
    },
    async write(path, data, options) {
      return put(path, data, options)
    },
    async list(path, options) {
      return listPage(path, options)
    },
    listNow: listPage,
    async mkdir(path) {
      ensureDir(path)
    },
    async remove(path, options = {}) {
      if (path === '')
        throw new IsoagentError('invalid_argument', 'refusing to remove the workspace root')
      const parent = WorkspacePath.parent(path)
      const name = WorkspacePath.basename(path)
      if (files.delete(path)) {
        dirs.get(parent)?.delete(name)
        return
      }
      const children = dirs.get(path)
      if (children === undefined) throw notFoundError(path)
      if (children.size > 0 && !options.recursive) {
        throw new IsoagentError('not_empty', `${path} is not empty`, { data: { path } })
      }
      const prefix = path + '/'
      for (const key of [...files.keys()]) if (key.startsWith(prefix)) files.delete(key)
      for (const key of [...dirs.keys()])
        if (key === path || key.startsWith(prefix)) dirs.delete(key)
      dirs.get(parent)?.delete(name)
    },
    async rename(from, to) {
      const file = files.get(from)
      if (file === undefined) {
        if (dirs.has(from))
          throw new IsoagentError(
            'unsupported',
            'renaming directories is not supported in memory workspaces',
          )
        throw notFoundError(from)
      }
      put(to, file.data)
      files.delete(from)
      dirs.get(WorkspacePath.parent(from))?.delete(WorkspacePath.basename(from))
    },
  } satisfies WorkspaceServices
}
