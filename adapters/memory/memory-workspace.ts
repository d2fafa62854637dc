import { WorkspacePath, type WorkspaceServices } from '../../src/index.ts'
import {
  emptyTree,
  ensureDir,
  listPage,
  put,
  readFile,
  remove,
  rename,
  statOf,
} from './memory-tree.ts'

/**
 * A workspace held in memory: runs everywhere (Node, workerd, browsers). Writes are atomic and
 * preconditions are checked atomically (single-threaded), so `conditionalWrite` is true.
 */
export function memoryWorkspace(
  initial: Record<string, string | Uint8Array> = {},
): WorkspaceServices {
  const tree = emptyTree()
  const encoder = new TextEncoder()
  for (const [name, content] of Object.entries(initial)) {
    const data = typeof content === 'string' ? encoder.encode(content) : content
    put(tree, WorkspacePath.parse(name), data)
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
    stat: async (path) => statOf(tree, path),
    read: async (path, range) => readFile(tree, path, range),
    readNow(path, range, into) {
      const bytes = readFile(tree, path, range)
      // Into the caller's buffer when it fits: a search reads into memory its kernels search.
      if (into === undefined || bytes.length > into.length) return bytes
      into.set(bytes)
      return into.subarray(0, bytes.length)
    },
    async readStream(path, range) {
      const data = readFile(tree, path, range)
      return new ReadableStream<Uint8Array>({
        start(controller) {
          if (data.length > 0) controller.enqueue(data)
          controller.close()
        },
      })
    },
    write: async (path, data, options) => put(tree, path, data, options),
    list: async (path, options) => listPage(tree, path, options),
    listNow: (path, options) => listPage(tree, path, options),
    mkdir: async (path) => ensureDir(tree, path),
    remove: async (path, options) => remove(tree, path, options),
    rename: async (from, to) => rename(tree, from, to),
  } satisfies WorkspaceServices
}
