import {
  checkPrecondition,
  isDirectoryError,
  notDirectoryError,
  notFoundError,
  versionConflict,
} from '../workspace/adapter-kit.ts'
import { WorkspacePath } from '../workspace/workspace-path.ts'
import type {
  WriteOptions,
  WriteOutcome,
  WritePrecondition,
} from '../workspace/workspace-services.ts'
import type { ObjectHead, ObjectStore, PutCondition } from './object-store.ts'
import type { ObjectTree } from './object-tree.ts'

/**
 * Write a file: refused where a directory is (`is_directory`), under a file (`not_directory`),
 * without its parent when `createParents` is false (`not_found`), or when the precondition fails
 * (`version_conflict`). The precondition is checked here, then sent with the `put` for the store to
 * enforce where it can; writes to one key are serialised within this workspace.
 */
export async function writeObject(
  tree: ObjectTree,
  path: WorkspacePath,
  data: Uint8Array,
  options: WriteOptions = {},
): Promise<WriteOutcome> {
  if (path === '') throw isDirectoryError(path)
  const key = tree.keys.file(path)
  const { signal, precondition } = options
  tree.checkSignal(signal, 'write', path)
  return tree.withLock(key, async () => {
    const current = await writable(tree, path, options)
    checkPrecondition(path, current === undefined ? null : current.version, precondition)
    tree.checkSignal(signal, 'write', path)
    const condition = await conditionOf(tree.store, precondition)
    const put = await tree.call('write', path, () => tree.store.put(key, data, condition, signal))
    if (put === 'conflict') {
      const now = await tree.store.head(key).catch(() => undefined)
      throw versionConflict(path, precondition, now === undefined ? null : now.version)
    }
    const version = put.version ?? (await tree.head(key, 'write', path))?.version ?? UNKNOWN_VERSION
    return { created: current === undefined, version }
  })
}

/** The version of a written object whose store told none and that is gone again. */
const UNKNOWN_VERSION = 'w:0:0'

/** The object now at `path` (undefined: none), once it is sure a file may be written there. */
async function writable(
  tree: ObjectTree,
  path: WorkspacePath,
  options: WriteOptions,
): Promise<ObjectHead | undefined> {
  const { signal } = options
  const parent = WorkspacePath.parent(path)
  const [current, isDir, ancestor, parentExists] = await Promise.all([
    tree.head(tree.keys.file(path), 'write', path, signal),
    tree.exists(tree.keys.dir(path), 'write', path, signal),
    tree.fileAncestor(path, 'write', signal),
    options.createParents === false
      ? tree.dirExists(parent, 'write', signal)
      : Promise.resolve(true),
  ])
  if (isDir) throw isDirectoryError(path)
  if (ancestor !== undefined) throw notDirectoryError(path, ancestor)
  if (!parentExists) throw notFoundError(parent)
  return current
}

/** The condition the `put` carries: none without a precondition or where the store ignores it. */
async function conditionOf(
  store: ObjectStore,
  precondition: WritePrecondition | undefined,
): Promise<PutCondition | undefined> {
  if (!precondition?.ifAbsent && precondition?.ifVersion === undefined) return undefined
  if (!(await store.conditionalWrites())) return undefined
  return precondition.ifAbsent ? { ifNoneMatch: '*' } : { ifMatch: precondition.ifVersion! }
}
