import * as fs from 'node:fs/promises'
import * as nodePath from 'node:path'
import { IsoagentError } from '../../src/errors.ts'
import { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import type { ListOptions, ListPage } from '../../src/workspace/workspace-services.ts'
import { fromErrno } from './local-errno.ts'
import { listingOf, listingPage, reapSideFiles } from './local-listing.ts'
import { pinDir } from './pinned-dir.ts'

// The tree operations of a local workspace (list with promises, mkdir, remove, rename): each
// entry is reached in its parent directory, pinned by descriptor (see pinned-dir.ts).

/** Where a local workspace's tree operations work: its real root and checked resolution. */
export interface LocalTree {
  /** The workspace root, a real path. */
  readonly realRoot: string
  /** The checked real location of a workspace path (see local-resolve.ts). */
  readonly resolve: (path: WorkspacePath) => string
}

/** A listing page read with promises (for roots where synchronous calls may block long). */
export async function listAsync(
  tree: LocalTree,
  path: WorkspacePath,
  listOptions: ListOptions,
): Promise<ListPage> {
  const real = tree.resolve(path)
  let dirents
  try {
    dirents = await fs.readdir(real, { withFileTypes: true })
  } catch (error) {
    throw fromErrno(error, path, 'list')
  }
  reapSideFiles(real, dirents)
  return listingPage(listingOf(dirents), listOptions)
}

/** `mkdir -p` of `path`, each directory created inside the root. */
export async function makeDir(tree: LocalTree, path: WorkspacePath): Promise<void> {
  try {
    pinDir(tree.realRoot, tree.resolve(path), true, path).close()
  } catch (error) {
    throw fromErrno(error, path, 'mkdir')
  }
}

/** Remove the entry itself (not followed) in its parent; a directory only when empty or `recursive`. */
export async function removeEntry(
  tree: LocalTree,
  path: WorkspacePath,
  removeOptions: { recursive?: boolean } = {},
): Promise<void> {
  if (path === '')
    throw new IsoagentError('invalid_argument', 'refusing to remove the workspace root')
  const name = WorkspacePath.basename(path)
  try {
    const dir = pinDir(tree.realRoot, tree.resolve(WorkspacePath.parent(path)), false, path)
    try {
      const entry = dir.at(name)
      const s = await fs.lstat(entry)
      if (s.isDirectory())
        await (removeOptions.recursive === true
          ? fs.rm(entry, { recursive: true })
          : fs.rmdir(entry))
      else await fs.unlink(entry)
    } finally {
      dir.close()
    }
  } catch (error) {
    throw fromErrno(error, path, 'remove')
  }
}

/** Move the entry `from` (not followed) to `to`, creating `to`'s parents. */
export async function renameEntry(
  tree: LocalTree,
  from: WorkspacePath,
  to: WorkspacePath,
): Promise<void> {
  if (from === '' || to === '')
    throw new IsoagentError('invalid_argument', 'refusing to rename the workspace root')
  const target = tree.resolve(to)
  try {
    const source = pinDir(tree.realRoot, tree.resolve(WorkspacePath.parent(from)), false, from)
    try {
      const into = pinDir(tree.realRoot, nodePath.dirname(target), true, to)
      try {
        await fs.rename(source.at(WorkspacePath.basename(from)), into.at(nodePath.basename(target)))
      } finally {
        into.close()
      }
    } finally {
      source.close()
    }
  } catch (error) {
    throw fromErrno(error, from, 'rename')
  }
}
