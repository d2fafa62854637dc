import type { DirEntry, EntryKind } from '../../src/workspace/workspace-services.ts'

/**
 * What a directory's `stat` says about its entries. Adding, removing or renaming an entry sets
 * the directory's mtime and ctime to the current time, and nothing a process can call sets ctime
 * back: a directory whose stamp is unchanged still has the entries it had.
 */
export interface DirStamp {
  dev: number
  ino: number
  ctimeMs: number
  mtimeMs: number
}

/** A directory's entries, names in code-unit order. */
export interface Listing {
  names: readonly string[]
  kinds: ReadonlyMap<string, EntryKind>
  /** The entries in `names` order, frozen: whole-listing pages share them. */
  entries: readonly Readonly<DirEntry>[]
}

/** Options of {@link ListingCache}. */
export interface ListingCacheOptions {
  /** Names kept in all, at most; the oldest listings go first. */
  maxNames: number
  /**
   * A listing is kept only when its directory's last change is this much older (ms) than the
   * moment the listing began. A change within the same timestamp tick as an earlier one leaves
   * the stamp as it was, so only a directory that has been still for longer than a tick can be
   * trusted (the racy-timestamp rule git applies to its index).
   */
  settleMs: number
}

/**
 * Directory listings of one thread, reused while the directory's {@link DirStamp} is unchanged:
 * a walk that has listed a tree before costs one `stat` per directory instead of an open, two or
 * more `getdents` and a close. Keys are real paths, so workspaces on the same tree share it.
 */
export class ListingCache {
  readonly #entries = new Map<string, { stamp: DirStamp; listing: Listing }>()
  readonly #options: ListingCacheOptions
  #names = 0

  constructor(options: ListingCacheOptions) {
    this.#options = options
  }

  /** The listing of `real` when it was kept under the same stamp. */
  get(real: string, stamp: DirStamp): Listing | undefined {
    const hit = this.#entries.get(real)
    if (hit === undefined) return undefined
    const s = hit.stamp
    if (
      s.ino === stamp.ino &&
      s.dev === stamp.dev &&
      s.ctimeMs === stamp.ctimeMs &&
      s.mtimeMs === stamp.mtimeMs
    )
      return hit.listing
    this.#drop(real)
    return undefined
  }

  /**
   * Keep `listing` of `real`, read after `stamp` was taken; `began` is `Date.now()` from before
   * both. A directory changed too recently for its stamp to tell is not kept.
   */
  put(real: string, stamp: DirStamp, listing: Listing, began: number): void {
    this.#drop(real)
    const settled = began - this.#options.settleMs
    if (!(stamp.ctimeMs < settled && stamp.mtimeMs < settled)) return
    if (listing.names.length > this.#options.maxNames) return
    while (this.#names + listing.names.length > this.#options.maxNames)
      this.#drop(this.#entries.keys().next().value!)
    this.#entries.set(real, { stamp, listing })
    this.#names += listing.names.length
  }

  /** Listings kept now (for tests). */
  get size(): number {
    return this.#entries.size
  }

  #drop(real: string) {
    const hit = this.#entries.get(real)
    if (hit === undefined) return
    this.#entries.delete(real)
    this.#names -= hit.listing.names.length
  }
}
