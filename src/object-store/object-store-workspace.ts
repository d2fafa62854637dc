import { notDirectoryError, notFoundError } from '../workspace/adapter-kit.ts'
import type { WorkspacePath } from '../workspace/workspace-path.ts'
import type {
  ByteRange,
  ListOptions,
  ListPage,
  WorkspaceDescriptor,
  WorkspaceServices,
  WorkspaceStat,
} from '../workspace/workspace-services.ts'
import { listDirectory } from './directory-listing.ts'
import type { KeySpace } from './key-space.ts'
import { makeDirectory, removeObjects, renameObjects } from './object-moves.ts'
import type { ObjectStore } from './object-store.ts'
import { directoryStat, fileStat, ObjectTree } from './object-tree.ts'
import { writeObject } from './object-write.ts'

/** Options of {@link objectStoreWorkspace}. */
export interface ObjectStoreWorkspaceOptions<D extends WorkspaceDescriptor> {
  /** Maps paths to keys under the prefix (the wall). */
  keys: KeySpace
  /** Keys asked for per `list` request (the store's maximum, usually 1000). */
  pageSize: number
  /** How the workspace is rebuilt on resume. */
  descriptor: D
}

/**
 * A workspace over any {@link ObjectStore}, under a key prefix (S3 and R2 are its drivers):
 *
 * - **Files** are objects: `key = prefix + path`. A read of a range is one ranged `get` (only
 *   those bytes travel); streams hand the body on as it arrives and fail with `io` when it ends
 *   short. `stat` is a `head`: size, `mtimeMs` and `version` (the ETag without quotes).
 * - **Directories** are key prefixes: one exists when any key starts with `dir/` (a zero-byte
 *   marker `dir/` counts, and `mkdir` writes one). Listings use `list` with delimiter `/`,
 *   `startAfter` and cursors; see {@link listDirectory} for how pages stay exact although the
 *   store's order is not the port's. Removing a directory's last entry leaves a marker, so the
 *   directory stays, as on disk.
 * - **Writes** are one `put` (atomic for readers). The precondition is checked with a `head`, then
 *   sent with the `put` for the store to enforce where it can (`conditionalWrites`).
 * - **remove** deletes one object, or every key under `dir/` in batches of 1000; **rename** copies
 *   and then deletes (directories key by key, all copies first): neither is atomic across keys.
 * - **The prefix is a wall**: keys are rebuilt from normalised paths and checked again, and every
 *   listed key is checked to lie under the prefix before it is shown or deleted.
 */
export function objectStoreWorkspace<D extends WorkspaceDescriptor>(
  store: ObjectStore,
  options: ObjectStoreWorkspaceOptions<D>,
): WorkspaceServices & { readonly descriptor: D } {
  const tree = new ObjectTree(store, options.keys, options.pageSize)
  return {
    capabilities: {
      read: true,
      write: true,
      exec: false,
      git: false,
      search: true,
      atomicRename: true,
      symlinks: false,
      /** True when the store is known to enforce the `put` conditions. */
      get conditionalWrite() {
        return store.conditionsEnforced
      },
    },
    descriptor: options.descriptor,
    stat: (path) => statOf(tree, path),
    read: async (path, range) => {
      const got = await tree.open(path, range, 'read')
      return got === undefined ? new Uint8Array() : tree.bytes(got, path, 'read')
    },
    readStream: async (path, range?: ByteRange) => {
      const got = await tree.open(path, range, 'read')
      if (got === undefined) return new ReadableStream<Uint8Array>({ start: (c) => c.close() })
      return tree.stream(got, path, 'read')
    },
    write: (path, data, writeOptions) => writeObject(tree, path, data, writeOptions),
    list: (path, listOptions) => listOf(tree, path, listOptions),
    mkdir: (path) => makeDirectory(tree, path),
    remove: (path, removeOptions = {}) =>
      removeObjects(tree, path, removeOptions.recursive === true),
    rename: (from, to) => renameObjects(tree, from, to),
    close: async () => {
      await store.close?.()
    },
  }
}

async function statOf(tree: ObjectTree, path: WorkspacePath): Promise<WorkspaceStat | undefined> {
  if (path === '') return directoryStat(path)
  const found = await tree.head(tree.keys.file(path), 'stat', path)
  if (found !== undefined) return fileStat(path, found)
  if (await tree.dirExists(path, 'stat')) return directoryStat(path)
  return undefined
}

/** One page of a directory, sorted by name; a file or nothing at `path` is an error. */
async function listOf(
  tree: ObjectTree,
  path: WorkspacePath,
  options: ListOptions = {},
): Promise<ListPage> {
  const base = tree.keys.dir(path)
  const { signal } = options
  tree.checkSignal(signal, 'list', path)
  const request = { prefix: base, delimiter: '/' as const, limit: tree.pageSize }
  const { page, sawAny } = await listDirectory(
    {
      page: ({ token, startAfter }) =>
        tree.listPage(
          token !== undefined
            ? { ...request, cursor: token }
            : startAfter !== undefined
              ? { ...request, startAfter }
              : request,
          'list',
          path,
          signal,
        ),
      exists: (dirPrefix) => tree.exists(dirPrefix, 'list', path, signal),
    },
    base,
    { after: options.after, limit: options.limit },
  )
  if (sawAny || path === '') return page
  if (options.after !== undefined && (await tree.dirExists(path, 'list', signal))) return page
  if ((await tree.head(tree.keys.file(path), 'list', path, signal)) !== undefined)
    throw notDirectoryError(path)
  throw notFoundError(path)
}
