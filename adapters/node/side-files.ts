import * as fs from 'node:fs/promises'
import * as nodePath from 'node:path'

// The files a local workspace keeps beside a target while it works on it: temp files of writes
// and downloads (`.<name>.<pid>-<random>.isoagent-tmp|download`) and the lock of a write
// (`.<name>.isoagent-lock`, and `.isoagent-lock-break` while a dead holder's lock is removed).
// They are hidden from listings (and so from ls, glob, grep and bm25), and stale ones are
// removed when a workspace opens and when a listing meets them.

/** Suffix of a write's temp file. */
export const TEMP_SUFFIX = '.isoagent-tmp'
/** Suffix of a download's temp file. */
export const DOWNLOAD_SUFFIX = '.isoagent-download'
/** Suffix of a write lock. */
export const LOCK_SUFFIX = '.isoagent-lock'
/** Suffix of the lock taken while a dead holder's write lock is removed. */
export const BREAK_SUFFIX = '.isoagent-lock-break'

/** A temp file younger than this is never removed, whoever made it (ms). */
export const TEMP_GRACE_MS = 5 * 60_000
/** A temp file whose maker cannot be told (no pid in its name) is removed after this (ms). */
export const UNOWNED_TEMP_MS = 60 * 60_000
/** A temp file older than this is removed even when its pid is alive (a reused pid) (ms). */
export const ABANDONED_TEMP_MS = 24 * 60 * 60_000

const SIDE_FILE = /^\..*\.isoagent-(?:tmp|download|lock|lock-break)$/
const OWNED_TEMP = /\.(\d+)-[0-9a-f]+\.isoagent-(?:tmp|download)$/

/** Whether `name` is one of the workspace's own side files (hidden from listings). */
export function isSideFile(name: string): boolean {
  return name.charCodeAt(0) === 46 && name.includes('.isoagent-') && SIDE_FILE.test(name)
}

/** `name` itself, or a short stand-in when the side file's name would be too long. */
function shortName(name: string): string {
  if (name.length <= 160) return name
  let h = 0x811c9dc5
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193)
  return `~${(h >>> 0).toString(16)}`
}

/** The name of a temp file for `name`, owned by this process. */
export function tempNameFor(name: string, suffix: string, random: string): string {
  return `.${shortName(name)}.${process.pid}-${random}${suffix}`
}

/** The name of the write lock of `name`. */
export const lockNameFor = (name: string) => `.${shortName(name)}${LOCK_SUFFIX}`
/** The name of the break lock of `name`'s write lock. */
export const breakNameFor = (name: string) => `.${shortName(name)}${BREAK_SUFFIX}`

/** Whether process `pid` on this host is alive (EPERM: alive, owned by someone else). */
export function pidAlive(pid: number): boolean {
  if (pid === process.pid) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Whether the temp file `name`, last modified at `mtimeMs`, is stale and may be removed. */
export function staleTemp(name: string, mtimeMs: number, now = Date.now()): boolean {
  if (!name.endsWith(TEMP_SUFFIX) && !name.endsWith(DOWNLOAD_SUFFIX)) return false
  const age = now - mtimeMs
  if (age < TEMP_GRACE_MS) return false
  const owner = OWNED_TEMP.exec(name)
  if (owner === null) return age > UNOWNED_TEMP_MS
  return age > ABANDONED_TEMP_MS || !pidAlive(Number(owner[1]))
}

/** Remove the stale temp files among `names` in the directory `dir` (a real path). */
export async function reapStaleTemps(dir: string, names: readonly string[]): Promise<number> {
  let removed = 0
  for (const name of names) {
    if (!name.endsWith(TEMP_SUFFIX) && !name.endsWith(DOWNLOAD_SUFFIX)) continue
    const path = nodePath.join(dir, name)
    const s = await fs.lstat(path).catch(() => undefined)
    if (s === undefined || !s.isFile() || !staleTemp(name, s.mtimeMs)) continue
    await fs.unlink(path).then(
      () => removed++,
      () => undefined,
    )
  }
  return removed
}

/** Directories the sweep at open looks into, at most. */
export const SWEEP_MAX_DIRS = 4000

/**
 * Remove stale temp files below `realRoot` (not into `.git`, not through symlinks), breadth first
 * over at most {@link SWEEP_MAX_DIRS} directories, until `stopped()` says so.
 */
export async function sweepStaleTemps(realRoot: string, stopped: () => boolean): Promise<number> {
  let removed = 0
  const queue = [realRoot]
  for (let seen = 0; queue.length > 0 && seen < SWEEP_MAX_DIRS && !stopped(); seen++) {
    const dir = queue.shift()!
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => [])
    const side: string[] = []
    for (const e of entries) {
      if (e.isDirectory() && e.name !== '.git') queue.push(nodePath.join(dir, e.name))
      else if (e.isFile() && isSideFile(e.name)) side.push(e.name)
    }
    if (side.length > 0) removed += await reapStaleTemps(dir, side)
  }
  return removed
}
