import { lstatSync, readlinkSync, realpathSync } from 'node:fs'
import * as nodePath from 'node:path'
import { IsoagentError } from '../../src/errors.ts'
import { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import { fromErrno } from './local-errno.ts'
import { escapeError } from './pinned-dir.ts'

// Containment-checked path resolution below a local workspace's real root, and the context
// object every read-side operation of the workspace (local-files.ts) works on.

/**
 * One local workspace's read side: its real root, how it does I/O, and its cache of checked
 * directory paths. The operations of local-dir-cache.ts, local-open.ts, local-read.ts and
 * local-listing.ts take it as their first argument.
 */
export interface LocalRoot {
  /** The workspace root, a real path (no symlink in it). */
  readonly realRoot: string
  /** Serve resolution, stat and small reads with synchronous calls (`syncMetadata`). */
  readonly syncIo: boolean
  /** Chunk size of streamed reads. */
  readonly chunkBytes: number
  /** The device whose listings are reused while their directory is unchanged, if any. */
  readonly device: number | undefined
  /** Checked real paths of directories by workspace path, and when they were checked. */
  readonly dirCache: Map<string, { real: string; at: number }>
}

/** Whether the real path `real` is the root or below it. */
export const contained = (root: LocalRoot, real: string) =>
  real === root.realRoot || real.startsWith(root.realRoot + nodePath.sep)

/**
 * The real location of `abs` (symlinks resolved, also dangling ones), or throws path_escape.
 * Synchronous: a few system calls that hit the kernel's dentry cache.
 */
function realOf(root: LocalRoot, abs: string, path: string, hops = 0): string {
  if (hops > 32) throw escapeError(path)
  try {
    const real = realpathSync.native(abs)
    if (!contained(root, real)) throw escapeError(path)
    return real
  } catch (error) {
    if (error instanceof IsoagentError) throw error
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw fromErrno(error, path, 'resolve')
  }
  let link
  try {
    link = lstatSync(abs)
  } catch {
    link = undefined
  }
  if (link?.isSymbolicLink()) {
    const target = nodePath.resolve(nodePath.dirname(abs), readlinkSync(abs))
    return realOf(root, target, path, hops + 1)
  }
  const parent = nodePath.dirname(abs)
  if (parent === abs) throw escapeError(path)
  const realParent = realOf(root, parent, path, hops)
  return nodePath.join(realParent, nodePath.basename(abs))
}

/** The checked real location of `path` (it need not exist), or throws path_escape. */
export const resolve = (root: LocalRoot, path: WorkspacePath) =>
  realOf(root, path === '' ? root.realRoot : nodePath.join(root.realRoot, path), path)

/** The real parent directory joined with the entry's own name (the entry itself not followed). */
export const resolveEntry = (root: LocalRoot, path: WorkspacePath) =>
  nodePath.join(resolve(root, WorkspacePath.parent(path)), WorkspacePath.basename(path))
