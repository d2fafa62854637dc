import type { TreeSnapshot } from '../../workspace/shell.ts'

/** Most entries a workspace walk records for change detection (per walk). */
export const CHANGED_PATHS_MAX_ENTRIES = 20_000
/** Longest time one workspace walk may take (ms); a walk stopped by it counts as cut. */
export const CHANGED_PATHS_WALK_MS = 1_000
/** Most paths listed per kind (created, modified, deleted); `counts` stay exact. */
export const CHANGED_PATHS_MAX_LISTED = 1_000

/** Paths a command created, modified or deleted under the workspace root (`.git` skipped). */
export interface ChangedPaths {
  created: string[]
  modified: string[]
  deleted: string[]
  /** Exact numbers of changed paths among the entries both walks covered. */
  counts: { created: number; modified: number; deleted: number }
  /**
   * A walk stopped at {@link CHANGED_PATHS_MAX_ENTRIES} entries or after
   * {@link CHANGED_PATHS_WALK_MS}, or a list was cut at
   * {@link CHANGED_PATHS_MAX_LISTED}: changes past that point are not reported.
   */
  truncated: boolean
  /** Entries the walk after the command recorded. */
  scanned: number
}

/** Compare root-relative paths in walk order: depth first, names sorted by UTF-16 code units. */
export function compareWalkOrder(a: string, b: string): number {
  const as = a.split('/')
  const bs = b.split('/')
  const n = Math.min(as.length, bs.length)
  for (let i = 0; i < n; i++) {
    if (as[i] !== bs[i]) return as[i]! < bs[i]! ? -1 : 1
  }
  return as.length - bs.length
}

function lastKey(map: Map<string, unknown>): string | undefined {
  let last: string | undefined
  for (const key of map.keys()) last = key
  return last
}

/**
 * The changes between two walks. When a walk was cut by its bound, only paths up to the earlier
 * cut (in walk order) are compared, since both walks saw everything before it; nothing beyond it
 * is claimed either way.
 */
export function diffSnapshots(before: TreeSnapshot, after: TreeSnapshot): ChangedPaths {
  const bounds: string[] = []
  if (before.truncated) {
    const k = lastKey(before.entries)
    if (k !== undefined) bounds.push(k)
  }
  if (after.truncated) {
    const k = lastKey(after.entries)
    if (k !== undefined) bounds.push(k)
  }
  const bound = bounds.sort(compareWalkOrder)[0]
  const covered = (path: string) => bound === undefined || compareWalkOrder(path, bound) <= 0
  const created: string[] = []
  const modified: string[] = []
  const deleted: string[] = []
  for (const [path, entry] of after.entries) {
    if (!covered(path)) continue
    const old = before.entries.get(path)
    if (old === undefined) created.push(path)
    else if (old.kind !== entry.kind) modified.push(path)
    else if (entry.kind !== 'directory' && old.signature !== entry.signature) modified.push(path)
  }
  for (const path of before.entries.keys()) {
    if (covered(path) && !after.entries.has(path)) deleted.push(path)
  }
  const counts = { created: created.length, modified: modified.length, deleted: deleted.length }
  const cut = (list: string[]) => list.sort(compareWalkOrder).slice(0, CHANGED_PATHS_MAX_LISTED)
  return {
    created: cut(created),
    modified: cut(modified),
    deleted: cut(deleted),
    counts,
    truncated:
      before.truncated ||
      after.truncated ||
      Math.max(counts.created, counts.modified, counts.deleted) > CHANGED_PATHS_MAX_LISTED,
    scanned: after.entries.size,
  }
}
