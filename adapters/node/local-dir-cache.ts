import { lstatSync, realpathSync } from 'node:fs'
import * as nodePath from 'node:path'
import { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import { contained, resolve, type LocalRoot } from './local-resolve.ts'
import { escapeError } from './pinned-dir.ts'

// The checked real paths of directories a local workspace reuses for a moment, so a walk
// resolves each directory once instead of once per file.

/**
 * How long a directory's checked real path is reused (ms). A walk reads the files of one
 * directory within a moment, so each directory is resolved once instead of once per file; a
 * directory swapped for a symlink is noticed within this time.
 */
export const DIR_CACHE_MS = 100
export const DIR_CACHE_MAX = 16384

/** A directory's checked real path and when it was checked (`Date.now()`), as cached. */
export interface DirHint {
  path: WorkspacePath
  real: string
  at: number
}

/** Cache a directory's real path, checked at `at`. */
export function rememberDir(root: LocalRoot, path: WorkspacePath, real: string, at: number) {
  if (root.dirCache.size >= DIR_CACHE_MAX) root.dirCache.clear()
  root.dirCache.set(path, { real, at })
}

/** `lstat` of `abs`, undefined when nothing is there or it cannot be looked at. */
function lstatOrUndefined(abs: string) {
  try {
    return lstatSync(abs, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
}

/**
 * The checked real path of an existing directory, reused for {@link DIR_CACHE_MS}. A directory
 * that is no symlink, in a parent with a checked real path, lies below that path: one `lstat`
 * instead of resolving every component again.
 */
export function realDir(root: LocalRoot, path: WorkspacePath): string {
  if (path === '') return root.realRoot
  const now = Date.now()
  const hit = root.dirCache.get(path)
  if (hit !== undefined && now - hit.at < DIR_CACHE_MS) return hit.real
  const below = belowCachedParent(root, path)
  const link = below === undefined ? undefined : lstatOrUndefined(below)
  if (link?.isDirectory()) {
    rememberDir(root, path, below!, now)
    return below!
  }
  let real: string
  try {
    // Only an existing location is cached: a missing one may yet appear as a symlink.
    real = realpathSync.native(nodePath.join(root.realRoot, path))
  } catch {
    return resolve(root, path)
  }
  if (!contained(root, real)) throw escapeError(path)
  rememberDir(root, path, real, now)
  return real
}

/**
 * Where `path` lies below its parent's cached real path, without looking at its last
 * component; undefined for the root or when the parent cannot be resolved that way.
 */
export function belowCachedParent(root: LocalRoot, path: WorkspacePath): string | undefined {
  if (path === '') return undefined
  let parent: string
  try {
    parent = realDir(root, WorkspacePath.parent(path))
  } catch {
    return undefined
  }
  // A workspace path's name is one plain component: no separator, no `.` or `..`.
  const name = WorkspacePath.basename(path)
  return parent.endsWith(nodePath.sep) ? parent + name : parent + nodePath.sep + name
}

/**
 * The real location of `path` when its last component is not a symlink: its parent's cached
 * real path joined with its name. Symlinks (and anything unusual) take the full resolution.
 */
export function resolveFast(root: LocalRoot, path: WorkspacePath): string {
  const candidate = root.syncIo ? belowCachedParent(root, path) : undefined
  if (candidate === undefined) return resolve(root, path)
  const link = lstatOrUndefined(candidate)
  return link === undefined || link.isSymbolicLink() ? resolve(root, path) : candidate
}

/** Fresh cache entries of `dirs` (checked real paths another thread may adopt). */
export function dirHints(root: LocalRoot, dirs: readonly WorkspacePath[]): DirHint[] {
  const now = Date.now()
  const hints: DirHint[] = []
  let last: string | undefined
  for (const dir of dirs) {
    if (dir === last) continue
    last = dir
    const hit = root.dirCache.get(dir)
    if (hit !== undefined && now - hit.at < DIR_CACHE_MS)
      hints.push({ path: dir, real: hit.real, at: hit.at })
  }
  return hints
}

/** Adopt another thread's fresh entries; each still expires DIR_CACHE_MS after its check. */
export function seedDirs(root: LocalRoot, hints: readonly DirHint[]): void {
  const now = Date.now()
  for (const h of hints)
    if (now - h.at < DIR_CACHE_MS && contained(root, h.real))
      rememberDir(root, h.path, h.real, h.at)
}
