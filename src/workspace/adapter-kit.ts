import { IsoagentError } from '../errors.ts'
import type { WritePrecondition } from './workspace-services.ts'

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
  if (precondition?.ifAbsent && actual !== null) {
    throw new IsoagentError('version_conflict', `${path} was created by someone else meanwhile`, {
      data: { path, expected: null, actual },
    })
  }
  if (precondition?.ifVersion !== undefined && actual !== precondition.ifVersion) {
    throw new IsoagentError('version_conflict', `${path} changed since it was read`, {
      data: { path, expected: precondition.ifVersion, actual },
    })
  }
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
