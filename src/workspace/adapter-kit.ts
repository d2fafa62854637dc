import { IsoagentError } from '../errors.ts'
import { WorkspacePath } from './workspace-path.ts'
import type { ByteRange, EntryKind, WritePrecondition } from './workspace-services.ts'

/**
 * Shared mechanics for workspace adapters, so each backend implements only what is its own.
 */

/**
 * Check a write precondition against the current version of `path` (`null` when absent).
 * Throws `IsoagentError` `version_conflict` with `{ path, expected, actual }` when it fails.
 */
export function checkPrecondition(
  path: string,
  actual: string | null,
  precondition: WritePrecondition | undefined,
): void {
  if (precondition?.ifAbsent && actual !== null) throw versionConflict(path, precondition, actual)
  if (precondition?.ifVersion !== undefined && actual !== precondition.ifVersion)
    throw versionConflict(path, precondition, actual)
}

/**
 * The `version_conflict` of a write whose precondition does not hold: `{ path, expected, actual }`
 * (`expected` is the `ifVersion` asked for, `null` for `ifAbsent`; `actual` `null` when absent).
 */
export function versionConflict(
  path: string,
  precondition: WritePrecondition | undefined,
  actual: string | null,
): IsoagentError {
  const message = precondition?.ifAbsent
    ? `${path} was created by someone else meanwhile`
    : `${path} changed since it was read`
  const expected = precondition?.ifAbsent ? null : (precondition?.ifVersion ?? null)
  return new IsoagentError('version_conflict', message, { data: { path, expected, actual } })
}

const shown = (path: string) => WorkspacePath.display(path as WorkspacePath)

/** `not_found` for `path`: `not found: <path>`, data `{ path }`. */
export function notFoundError(path: string): IsoagentError {
  return new IsoagentError('not_found', `not found: ${shown(path)}`, { data: { path } })
}

/** `is_directory` for `path` (a file was expected): data `{ path }`. */
export function isDirectoryError(path: string): IsoagentError {
  return new IsoagentError('is_directory', `${shown(path)} is a directory`, { data: { path } })
}

/** `not_directory`: `file`, on the way to `path`, is a file (data `{ path, file }`). */
export function notDirectoryError(path: string, file: string = path): IsoagentError {
  return new IsoagentError('not_directory', `${file} is a file, not a directory`, {
    data: file === path ? { path } : { path, file },
  })
}

/**
 * The checks every workspace makes of the entry an operation targets, given `kind`, what is at
 * `path` (undefined: nothing there): `list` needs a directory (else `not_found`, or
 * `not_directory` "<path> is a file"); `write` neither the root nor a directory
 * (`is_directory`); `remove` something there (`not_found`) other than the root
 * (`invalid_argument`).
 */
export function checkEntry(
  op: 'list' | 'write' | 'remove',
  path: string,
  kind: EntryKind | undefined,
): void {
  if (op === 'list') {
    if (kind === undefined) throw notFoundError(path)
    if (kind !== 'directory')
      throw new IsoagentError('not_directory', `${shown(path)} is a file`, { data: { path } })
  } else if (op === 'write') {
    if (path === '') throw new IsoagentError('is_directory', 'the workspace root is a directory')
    if (kind === 'directory') throw isDirectoryError(path)
  } else {
    if (path === '')
      throw new IsoagentError('invalid_argument', 'refusing to remove the workspace root')
    if (kind === undefined) throw notFoundError(path)
  }
}

/**
 * A byte range made whole: `start` ≥ 0 and `length` ≥ 0 (or undefined: to the end), both rounded
 * down, as every adapter reads them.
 */
export function normaliseRange(range: ByteRange = {}): { start: number; length?: number } {
  const start = Math.max(0, Math.floor(range.offset ?? 0))
  if (range.length === undefined) return { start }
  return { start, length: Math.max(0, Math.floor(range.length)) }
}

/** `[start, end)` of `range` within `size` bytes, clipped to them. */
export function clipRange(range: ByteRange = {}, size: number): [number, number] {
  const { start, length } = normaliseRange(range)
  const from = Math.min(start, size)
  return [from, length === undefined ? size : Math.min(size, from + length)]
}

/**
 * `run` over `items`, at most `limit` at a time; the first failure stops taking new items and is
 * thrown once those running have settled.
 */
export async function mapLimit<T>(
  items: readonly T[],
  limit: number,
  run: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0
  let failed = false
  const worker = async () => {
    while (!failed && next < items.length) {
      const index = next++
      try {
        await run(items[index]!, index)
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

/**
 * One page of sorted names: those after `after` (exclusive), at most `limit`, and the name to
 * continue after when more follow.
 */
export function pageOfNames(
  sorted: readonly string[],
  after: string | undefined,
  limit: number | undefined,
): { names: string[]; next?: string } {
  let from = 0
  if (after !== undefined) {
    from = sorted.findIndex((n) => n > after)
    if (from === -1) from = sorted.length
  }
  const max = limit ?? Number.POSITIVE_INFINITY
  const names = sorted.slice(from, from + max)
  return from + max < sorted.length ? { names, next: names[names.length - 1]! } : { names }
}

/** Runs tasks one at a time per key (in the order they arrive), different keys in parallel. */
export function keyedLock(): <T>(key: string, run: () => Promise<T>) => Promise<T> {
  const locks = new Map<string, Promise<unknown>>()
  return async (key, run) => {
    const previous = locks.get(key) ?? Promise.resolve()
    const next = previous.then(run, run)
    const settled = next.catch(() => undefined)
    locks.set(key, settled)
    try {
      return await next
    } finally {
      if (locks.get(key) === settled) locks.delete(key)
    }
  }
}
