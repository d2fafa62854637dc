import { IsoagentError } from '../errors.ts'
import {
  isDirectoryError,
  mapLimit,
  notDirectoryError,
  notFoundError,
} from '../workspace/adapter-kit.ts'
import { WorkspacePath } from '../workspace/workspace-path.ts'
import type { ObjectHead } from './object-store.ts'
import type { ObjectTree } from './object-tree.ts'

const COPY_CONCURRENCY = 8

/** Make a directory: a zero-byte marker `dir/`, unless some key already makes it exist. */
export async function makeDirectory(tree: ObjectTree, path: WorkspacePath): Promise<void> {
  if (path === '') return
  const key = tree.keys.dir(path)
  const [self, ancestor, already] = await Promise.all([
    tree.head(tree.keys.file(path), 'mkdir', path),
    tree.fileAncestor(path, 'mkdir'),
    tree.exists(key, 'mkdir', path),
  ])
  if (ancestor !== undefined) throw notDirectoryError(path, ancestor)
  if (self !== undefined)
    throw new IsoagentError('already_exists', `${path} is a file`, { data: { path } })
  if (already) return
  await tree.call('mkdir', path, () => tree.store.put(key, new Uint8Array()))
}

/** Remove a file, an empty directory, or (`recursive`) every key under a directory. */
export async function removeObjects(
  tree: ObjectTree,
  path: WorkspacePath,
  recursive: boolean,
): Promise<void> {
  if (path === '')
    throw new IsoagentError('invalid_argument', 'refusing to remove the workspace root')
  const key = tree.keys.file(path)
  if ((await tree.head(key, 'remove', path)) !== undefined) {
    await tree.withLock(key, () => tree.call('remove', path, () => tree.store.delete([key])))
    await tree.keepDirectory(WorkspacePath.parent(path), 'remove')
    return
  }
  const base = tree.keys.dir(path)
  const some = await tree.listPage({ prefix: base, limit: 2 }, 'remove', path)
  const found = some.objects.map((o) => o.key).filter((k) => k.startsWith(base))
  if (found.length === 0) throw notFoundError(path)
  const empty = found.every((k) => k === base)
  if (!empty && !recursive)
    throw new IsoagentError('not_empty', `${path} is not empty`, { data: { path } })
  if (empty) await tree.call('remove', path, () => tree.store.delete([base]))
  else {
    const all = await tree.keysUnder(base, 'remove', path)
    await tree.deleteKeys(
      all.map((k) => k.key),
      'remove',
      path,
    )
  }
  await tree.keepDirectory(WorkspacePath.parent(path), 'remove')
}

/**
 * Rename a file or a directory: copies, then deletes (neither atomic across keys). A directory's
 * keys are all copied before any is deleted, so a failure leaves the source whole.
 */
export async function renameObjects(
  tree: ObjectTree,
  from: WorkspacePath,
  to: WorkspacePath,
): Promise<void> {
  if (from === '' || to === '')
    throw new IsoagentError('invalid_argument', 'the workspace root cannot be renamed or replaced')
  if (from === to) {
    const there =
      (await tree.head(tree.keys.file(from), 'rename', from)) !== undefined ||
      (await tree.dirExists(from, 'rename'))
    if (!there) throw notFoundError(from)
    return
  }
  // Every key is made (and so checked against the wall) before the first request.
  const [fromKey, toKey, toDir] = [tree.keys.file(from), tree.keys.file(to), tree.keys.dir(to)]
  const source = await tree.head(fromKey, 'rename', from)
  const [toFile, toDirKeys, ancestor] = await Promise.all([
    tree.head(toKey, 'rename', to),
    tree
      .listPage({ prefix: toDir, limit: 2 }, 'rename', to)
      .then((out) => out.objects.map((o) => o.key)),
    tree.fileAncestor(to, 'rename'),
  ])
  if (ancestor !== undefined) throw notDirectoryError(to, ancestor)
  if (source !== undefined) {
    if (toDirKeys.length > 0) throw isDirectoryError(to)
    await renameFile(tree, from, to, source)
  } else {
    if (to.startsWith(from + '/'))
      throw new IsoagentError('invalid_argument', `cannot move ${from} into itself (${to})`, {
        data: { path: from, to },
      })
    await renameDirectory(tree, from, to, toFile, toDirKeys)
  }
  await tree.keepDirectory(WorkspacePath.parent(from), 'rename')
}

/** Copy one object (read through the core where the store cannot copy it itself). */
function copyKey(tree: ObjectTree, from: string, to: string, size: number, path: string) {
  const read = async (key: string, range = { start: 0 }) => {
    const got = await tree.call('rename', path, () => tree.store.get(key, range))
    if (got === 'missing')
      throw new IsoagentError('version_conflict', `${path} changed while it was moved`, {
        data: { path, expected: null, actual: null },
      })
    return got === 'empty' ? new Uint8Array() : tree.bytes(got, path, 'rename')
  }
  return tree.call('rename', path, () => tree.store.copy(from, to, size, read))
}

async function renameFile(
  tree: ObjectTree,
  from: WorkspacePath,
  to: WorkspacePath,
  source: ObjectHead,
): Promise<void> {
  const fromKey = tree.keys.file(from)
  const toKey = tree.keys.file(to)
  // Both keys locked, always in the same order, so opposite renames cannot deadlock.
  const [first, second] = [fromKey, toKey].sort()
  await tree.withLock(first!, () =>
    tree.withLock(second!, async () => {
      await copyKey(tree, fromKey, toKey, source.size, from)
      await tree.call('rename', from, () => tree.store.delete([fromKey]))
    }),
  )
}

async function renameDirectory(
  tree: ObjectTree,
  from: WorkspacePath,
  to: WorkspacePath,
  toFile: ObjectHead | undefined,
  toDirKeys: string[],
): Promise<void> {
  const { keys } = tree
  const fromBase = keys.dir(from)
  const toBase = keys.dir(to)
  const all = await tree.keysUnder(fromBase, 'rename', from)
  if (all.length === 0) throw notFoundError(from)
  if (toFile !== undefined) throw notDirectoryError(to)
  if (toDirKeys.some((k) => k !== toBase))
    throw new IsoagentError('not_empty', `${to} is not empty`, { data: { path: to } })
  // Every target key is checked before anything is copied; markers (`…/`) stay markers.
  const targets = all.map(({ key, size }) => {
    const rest = key.slice(fromBase.length)
    const target =
      rest === ''
        ? toBase
        : rest.endsWith('/')
          ? keys.check(`${to}/${rest.slice(0, -1)}`, '/')
          : keys.check(`${to}/${rest}`, '')
    return { from: key, to: target, size }
  })
  await mapLimit(targets, COPY_CONCURRENCY, (t) => copyKey(tree, t.from, t.to, t.size, from))
  await tree.deleteKeys(
    all.map((k) => k.key),
    'rename',
    from,
  )
}
