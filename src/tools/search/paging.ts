import { IsoagentError } from '../../errors.ts'
import { decodeCursor, encodeCursor } from '../../paging/cursor.ts'
import { WorkspacePath } from '../../workspace/workspace-path.ts'
import type { SearchArgs } from './search-args.ts'
import type { WalkSkips } from './walk/walk.ts'

// What the paged modes (grep, glob) share: the cursor a page returns, and its skip counts.

/** FNV-1a of the query's defining arguments: a cursor only continues the query that made it. */
function queryKey(args: SearchArgs): string {
  const text = JSON.stringify([
    args.mode,
    args.query,
    args.path ?? '',
    args.include ?? '',
    args.context ?? 0,
    args.case_sensitive ?? true,
    args.output_mode ?? 'content',
    args.sort ?? 'path',
  ])
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0).toString(36)
}

/** Where a page of grep or glob stopped: what its cursor holds besides the query's key. */
export interface Position {
  /** Path of the file where the previous page stopped. */
  p: string
  /** 1: resume inside file `p` (content mode); 0: resume after it. */
  i: number
  /** Content mode: last match line shown in that file. */
  l: number
  /** Content mode: last line printed in that file. */
  s: number
  /** Backend order: matching files already returned. */
  n: number
}

/** The position of `args.cursor`, checked to belong to this query; undefined without one. */
export function readCursor(args: SearchArgs): Position | undefined {
  if (args.cursor === undefined) return undefined
  const c = decodeCursor('search', args.cursor)
  if (c.q !== queryKey(args)) {
    throw new IsoagentError(
      'invalid_argument',
      'invalid cursor: it belongs to a different query; repeat the query that returned it, unchanged',
    )
  }
  const ints = [c.i, c.l, c.s, c.n].every((v) => Number.isInteger(v) && (v as number) >= 0)
  // The position is a path the walk gave (any name a directory can hold), not one to parse.
  const ok = WorkspacePath.isNormal(c.p) && ints && (c.i === 0 || c.i === 1)
  if (!ok) throw new IsoagentError('invalid_argument', 'invalid cursor: malformed position')
  return {
    p: c.p as string,
    i: c.i as number,
    l: c.l as number,
    s: c.s as number,
    n: c.n as number,
  }
}

/** `files_skipped` of a grep or glob page's metadata. */
export function skipsMetadata(
  skips: WalkSkips,
  counts: { binary: number; lineTooLong: number; vanished: number },
) {
  return {
    binary: counts.binary,
    line_too_long: counts.lineTooLong,
    vanished: counts.vanished,
    ...skips,
  }
}

/** The cursor of the page after one that stopped at `position`. */
export function positionCursor(args: SearchArgs, position: Position): string {
  return encodeCursor('search', { q: queryKey(args), ...position })
}
