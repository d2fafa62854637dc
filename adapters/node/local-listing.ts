import { type Dirent, readdirSync, statfsSync, statSync } from 'node:fs'
import * as nodePath from 'node:path'
import { pageOfNames } from '../../src/workspace/adapter-kit.ts'
import { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import type {
  DirEntry,
  EntryKind,
  ListOptions,
  ListPage,
} from '../../src/workspace/workspace-services.ts'
import { realDir, rememberDir } from './local-dir-cache.ts'
import { fromErrno } from './local-errno.ts'
import type { LocalRoot } from './local-resolve.ts'
import { ListingCache, type DirStamp, type Listing } from './listing-cache.ts'
import { isSideFile, reapStaleTemps } from './side-files.ts'

// Directory listings of a local workspace: pages of sorted names, the workspace's side files
// left out, unchanged directories' listings reused where the file system stamps them.

/**
 * Linux file systems (`statfs` magic numbers) whose directory timestamps this kernel sets on
 * every change to the entries: ext2/3/4, xfs, btrfs, tmpfs, overlayfs, zfs, f2fs. Elsewhere
 * (network and FUSE file systems, other systems) listings are never reused.
 */
const STAMPED_FILE_SYSTEMS = new Set([
  0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010,
])

/** This thread's directory listings, shared by every local workspace it serves. */
export const listings = new ListingCache({ maxNames: 500_000, settleMs: 2000 })

/** The device of `realRoot` when its listings may be reused, else undefined. */
export function stampedDevice(realRoot: string): number | undefined {
  if (process.platform !== 'linux') return undefined
  try {
    if (!STAMPED_FILE_SYSTEMS.has(statfsSync(realRoot).type)) return undefined
    return statSync(realRoot).dev
  } catch {
    return undefined
  }
}

function kindOf(entry: {
  isFile(): boolean
  isDirectory(): boolean
  isSymbolicLink(): boolean
}): EntryKind {
  if (entry.isFile()) return 'file'
  if (entry.isDirectory()) return 'directory'
  if (entry.isSymbolicLink()) return 'symlink'
  return 'other'
}

/**
 * Remove, in the background, stale temp files among `dirents` of the directory `real` (a
 * listing hides them; this keeps them from piling up where a crash left them).
 */
export function reapSideFiles(real: string, dirents: readonly Dirent[]): void {
  let side: string[] | undefined
  for (const d of dirents) if (isSideFile(d.name)) (side ??= []).push(d.name)
  if (side !== undefined) void reapStaleTemps(real, side).catch(() => undefined)
}

/**
 * The listing `readdir` gave as `dirents`: kinds by name, names sorted, the workspace's own side
 * files (temp files and write locks, see side-files.ts) left out.
 */
export function listingOf(dirents: readonly Dirent[]): Listing {
  const kinds = new Map<string, EntryKind>()
  for (const d of dirents) if (!isSideFile(d.name)) kinds.set(d.name, kindOf(d))
  const names = [...kinds.keys()].sort()
  const entries = names.map((name) => Object.freeze({ name, kind: kinds.get(name)! }))
  return { names, kinds, entries }
}

/** One page of `listing`. */
export function listingPage(listing: Listing, options: ListOptions): ListPage {
  // A page of the whole listing shares its (frozen) entries: a walk allocates none per entry.
  if (options.after === undefined && (options.limit ?? Infinity) >= listing.names.length)
    return { entries: listing.entries.slice() }
  const page = pageOfNames(listing.names, options.after, options.limit)
  const entries: DirEntry[] = page.names.map((name) => ({ name, kind: listing.kinds.get(name)! }))
  return page.next === undefined ? { entries } : { entries, next: page.next }
}

/** The stamp of the directory `real` when it is on the reused device, else undefined. */
function stampOf(root: LocalRoot, real: string): DirStamp | undefined {
  let s
  try {
    s = statSync(real, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
  if (s === undefined || !s.isDirectory() || s.dev !== root.device) return undefined
  return { dev: s.dev, ino: s.ino, ctimeMs: s.ctimeMs, mtimeMs: s.mtimeMs }
}

/** The listing of the directory `real` (at `path`): reused while unchanged, else read now. */
function listingAt(root: LocalRoot, real: string, path: WorkspacePath, now: number): Listing {
  const stamp = root.device === undefined ? undefined : stampOf(root, real)
  const reused = stamp === undefined ? undefined : listings.get(real, stamp)
  if (reused !== undefined) return reused
  let dirents
  try {
    dirents = readdirSync(real, { withFileTypes: true })
  } catch (error) {
    throw fromErrno(error, path, 'list')
  }
  const listing = listingOf(dirents)
  reapSideFiles(real, dirents)
  if (stamp !== undefined) listings.put(real, stamp, listing, now)
  return listing
}

/**
 * A listing page with synchronous calls, below the directory's checked real path. Listed
 * subdirectories (real directories, not symlinks) resolve to real/name: they are cached, so
 * walking into them costs no path resolution.
 */
export function listSync(
  root: LocalRoot,
  path: WorkspacePath,
  listOptions: ListOptions = {},
): ListPage {
  const real = realDir(root, path)
  // When the listing began, and when the directories in it were checked.
  const now = Date.now()
  const listing = listingAt(root, real, path, now)
  const base = real.endsWith(nodePath.sep) ? real : real + nodePath.sep
  for (const [name, kind] of listing.kinds)
    if (kind === 'directory') rememberDir(root, WorkspacePath.child(path, name), base + name, now)
  return listingPage(listing, listOptions)
}
