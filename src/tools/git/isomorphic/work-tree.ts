import * as git from 'isomorphic-git'
import type { IsoGitStat } from '../fs-bridge.ts'
import { blobOid } from '../git-text.ts'
import { encoder, isNotFound, type RepoContext } from './context.ts'
import type { IndexEntry } from './index-file.ts'

/** How a tracked file's working-tree copy compares with its index entry. */
export type WorkState = 'same' | 'modified' | 'deleted'

const UINT32 = 2 ** 32
/** Nanoseconds two timestamps may differ by and count as equal: `mtimeMs` is a double. */
const NS_SLACK = 1000
const S_IFMT = 0o170000
const S_IFLNK = 0o120000
const S_IFGITLINK = 0o160000

/** Files visited at once (stat, read, hash). */
export const WORK_CONCURRENCY = 64

/** `[seconds, nanoseconds]` of a stat time in milliseconds. */
function split(ms: number): [number, number] {
  const seconds = Math.floor(ms / 1000)
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)]
}

function sameTime(ms: number, seconds: number, nanoseconds: number): boolean {
  const [s, ns] = split(ms)
  return s % UINT32 === seconds && Math.abs(ns - nanoseconds) <= NS_SLACK
}

/** The mode git would record for `stat` (`core.filemode` false keeps the index's exec bit). */
function modeOf(stat: IsoGitStat, entry: IndexEntry, filemode: boolean): number {
  if (stat.isSymbolicLink()) return S_IFLNK
  if (!filemode && (entry.mode & S_IFMT) === 0o100000) return entry.mode
  return stat.mode & 0o111 ? 0o100755 : 0o100644
}

/**
 * Whether `stat` is the one git recorded in `entry` (git's `match_stat_data`: ctime, mtime,
 * inode, owner, size, and the file type and exec bit).
 */
function statMatches(entry: IndexEntry, stat: IsoGitStat, filemode: boolean): boolean {
  return (
    entry.size === stat.size % UINT32 &&
    sameTime(stat.mtimeMs, entry.mtimeSeconds, entry.mtimeNanoseconds) &&
    sameTime(stat.ctimeMs, entry.ctimeSeconds, entry.ctimeNanoseconds) &&
    entry.ino === stat.ino % UINT32 &&
    entry.uid === stat.uid % UINT32 &&
    entry.gid === stat.gid % UINT32 &&
    modeOf(stat, entry, filemode) === entry.mode
  )
}

/** The key of a stat in the backend's cache of hashed files. */
const statKey = (path: string, s: IsoGitStat) =>
  `${path}\0${s.mtimeMs}\0${s.ctimeMs}\0${s.size}\0${s.ino}\0${s.mode}`

async function lstatOrUndefined(repo: RepoContext, path: string) {
  try {
    return await repo.fs.promises.lstat(repo.abs(path))
  } catch (error) {
    if (isNotFound(error) || (error as { code?: unknown }).code === 'ENOTDIR') return undefined
    throw error
  }
}

/** The blob id of the working-tree file `path` at `stat`: from the cache, else hashed. */
async function workOid(repo: RepoContext, path: string, stat: IsoGitStat): Promise<string> {
  const key = statKey(path, stat)
  const known = repo.statOids.get(key)
  if (known !== undefined) return known
  const data = stat.isSymbolicLink()
    ? encoder.encode(await repo.fs.promises.readlink(repo.abs(path)))
    : await repo.readBytes(repo.abs(path))
  const oid = blobOid(data ?? new Uint8Array())
  // Racy git, for the cache: a file changed in the second it was read may change again within
  // the same timestamp; only a stat older than the current second identifies its content.
  if (Math.floor(stat.mtimeMs / 1000) < Math.floor(Date.now() / 1000)) {
    if (repo.statOids.size >= 200_000) repo.statOids.clear()
    repo.statOids.set(key, oid)
  }
  return oid
}

/**
 * How each tracked file compares with its index entry, as `git status` finds it: a file whose
 * stat matches the index and is older than the index file (`indexSeconds`) is unchanged
 * without reading it; any other (a changed stat, or racily clean: modified in the second the
 * index was written, when a second change could keep size and timestamp) is hashed.
 */
export async function trackedStates(
  repo: RepoContext,
  entries: IndexEntry[],
  indexSeconds: number,
  filemode: boolean,
): Promise<Map<string, WorkState>> {
  const out = new Map<string, WorkState>()
  const one = async (entry: IndexEntry): Promise<void> => {
    if (entry.skipWorktree || (entry.mode & S_IFMT) === S_IFGITLINK) {
      out.set(entry.path, 'same')
      return
    }
    const stat = await lstatOrUndefined(repo, entry.path)
    if (stat === undefined || stat.isDirectory()) {
      out.set(entry.path, 'deleted')
      return
    }
    const racy = entry.mtimeSeconds >= indexSeconds
    if (!racy && statMatches(entry, stat, filemode)) {
      out.set(entry.path, 'same')
      return
    }
    const sameMode = modeOf(stat, entry, filemode) === entry.mode
    const oid = await workOid(repo, entry.path, stat)
    out.set(entry.path, sameMode && oid === entry.oid ? 'same' : 'modified')
  }
  for (let i = 0; i < entries.length; i += WORK_CONCURRENCY)
    await Promise.all(entries.slice(i, i + WORK_CONCURRENCY).map(one))
  return out
}

/**
 * Untracked files (one by one, as `-uall`), not ignored: a walk of the working tree that
 * descends into directories holding tracked paths, and into untracked directories that are
 * not ignored. `.git` is never entered.
 */
export async function untrackedFiles(
  repo: RepoContext,
  tracked: Set<string>,
  trackedDirs: Set<string>,
): Promise<string[]> {
  const out: string[] = []
  const ignored = (path: string) => git.isIgnored({ fs: repo.fs, dir: repo.dir, filepath: path })
  const visit = async (dir: string, known: boolean): Promise<void> => {
    const names = await repo.listDir(dir === '' ? repo.dir : repo.abs(dir))
    const visitName = async (name: string): Promise<void> => {
      if (name === '.git') return
      const path = dir === '' ? name : `${dir}/${name}`
      if (tracked.has(path)) return
      if (known && trackedDirs.has(path)) return visit(path, true)
      const stat = await lstatOrUndefined(repo, path)
      if (stat === undefined) return
      if (stat.isDirectory()) {
        if (!(await ignored(`${path}/`))) await visit(path, false)
      } else if (!(await ignored(path))) out.push(path)
    }
    for (let i = 0; i < names.length; i += WORK_CONCURRENCY)
      await Promise.all(names.slice(i, i + WORK_CONCURRENCY).map(visitName))
  }
  await visit('', true)
  return out
}
