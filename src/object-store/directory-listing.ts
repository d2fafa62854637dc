import type { DirEntry, ListPage } from '../workspace/workspace-services.ts'
import { compareKeys, isListableName } from './key-space.ts'

/** One listing page, reduced to what a directory listing needs. */
export interface RawPage {
  objects: { key: string; size?: number }[]
  prefixes: string[]
  /** Continuation token when the answer was truncated. */
  next?: string
}

/** How {@link listDirectory} talks to the store. */
export interface ListBackend {
  /** One page of keys under `base` with delimiter `/`, from `token` or after `startAfter`. */
  page(request: { token?: string; startAfter?: string }): Promise<RawPage>
  /** Whether any key starts with `prefix` (a directory that exists). */
  exists(prefix: string): Promise<boolean>
}

/** Outcome of {@link listDirectory}: the page, and whether the store had any key under `base`. */
export interface DirectoryListing {
  page: ListPage
  /** Some key (a child, or the directory's own marker) was seen under `base`. */
  sawAny: boolean
}

/** Characters where UTF-16 order and S3's code point order disagree (U+E000–U+FFFF vs astral). */
const ORDER_HAZARD = /[\uE000-\uFFFF]/
const SLASH = 0x2f

/**
 * `after` cut before its first code unit at or above U+D800: a `StartAfter` that can never skip
 * a name sorting after `after` by UTF-16 code units, although S3 sorts keys by code point.
 */
export function safeStartAfter(after: string): string {
  for (let i = 0; i < after.length; i++) if (after.charCodeAt(i) >= 0xd800) return after.slice(0, i)
  return after
}

/**
 * One page of the directory whose keys start with `base`, sorted by name (UTF-16 code units, as
 * the port requires) and paged with `after`/`limit`.
 *
 * S3 returns keys in code point order and rolls a subdirectory up as `name/`, so its order is
 * not the port's: `src.ts` comes before `src/` although the name `src` sorts first. The listing
 * therefore starts at `StartAfter = base + after` (cut where the orders could disagree) and
 * follows `ContinuationToken`s only until the page is provably complete: more than `limit` names
 * collected, the last name returned contains nothing in U+E000–U+FFFF, and every directory that
 * could still sort before it (a prefix of it followed by a character below `/`) has been passed
 * or checked with one small prefix probe. Otherwise it reads on to the end of the directory.
 */
export async function listDirectory(
  backend: ListBackend,
  base: string,
  options: { after?: string; limit?: number } = {},
): Promise<DirectoryListing> {
  const { after } = options
  const max = options.limit === undefined ? Number.POSITIVE_INFINITY : Math.max(0, options.limit)
  const entries = new Map<string, DirEntry>()
  let sawAny = false
  let lastKey = ''
  const probed = new Set<string>()

  const candidates = () =>
    [...entries.keys()].filter((name) => after === undefined || name > after).sort()

  /** True when no key after `lastKey` can change the first `max` names. */
  async function complete(): Promise<boolean> {
    for (;;) {
      const names = candidates()
      if (names.length <= max) return false
      if (max === 0) return true
      const boundary = names[max - 1]!
      if (ORDER_HAZARD.test(boundary)) return false
      let added = false
      for (let i = 1; i < boundary.length; i++) {
        if (boundary.charCodeAt(i) >= SLASH) continue
        const name = boundary.slice(0, i)
        if (entries.has(name) || (after !== undefined && name <= after)) continue
        const dirPrefix = `${base}${name}/`
        if (compareKeys(dirPrefix, lastKey) <= 0 || probed.has(dirPrefix)) continue
        probed.add(dirPrefix)
        if (isListableName(name) && (await backend.exists(dirPrefix))) {
          entries.set(name, { name, kind: 'directory' })
          added = true
        }
      }
      if (!added) return true
    }
  }

  const startAfter = after === undefined ? undefined : base + safeStartAfter(after)
  let token: string | undefined
  for (;;) {
    const raw = await backend.page(token === undefined ? { startAfter } : { token })
    for (const object of raw.objects) {
      if (!object.key.startsWith(base)) continue
      sawAny = true
      if (compareKeys(object.key, lastKey) > 0) lastKey = object.key
      const name = object.key.slice(base.length)
      if (!isListableName(name)) continue
      // A key that is both an object and a prefix of others is shown as the file (as stat does).
      entries.set(name, { name, kind: 'file', size: object.size ?? 0 })
    }
    for (const prefix of raw.prefixes) {
      if (!prefix.startsWith(base) || !prefix.endsWith('/')) continue
      sawAny = true
      if (compareKeys(prefix, lastKey) > 0) lastKey = prefix
      const name = prefix.slice(base.length, -1)
      if (!isListableName(name) || entries.has(name)) continue
      entries.set(name, { name, kind: 'directory' })
    }
    if (raw.next === undefined) break
    token = raw.next
    if (max !== Number.POSITIVE_INFINITY && (await complete())) break
  }

  const names = candidates()
  const slice = names.slice(0, max)
  const list = slice.map((name) => entries.get(name)!)
  const page: ListPage =
    names.length > max && slice.length > 0
      ? { entries: list, next: slice[slice.length - 1]! }
      : { entries: list }
  return { page, sawAny }
}
