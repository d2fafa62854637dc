/** How long work kept for a next call stays available (ms). */
export const CARRYOVER_TTL_MS = 30_000
/** Entries kept at once; keeping one more drops the oldest. */
export const CARRYOVER_MAX_ENTRIES = 8

/**
 * Work a tool keeps between its calls in one session, such as a paged search's walk and the
 * scans it has already run past the end of a page. It is only ever a shortcut: a call that finds
 * nothing under its key does the work itself and gets the same result.
 *
 * The kernel drops every entry when a call that may change the workspace (a tool that is not
 * read-only) starts and again when it ends, and when the session closes; an entry not taken
 * within {@link CARRYOVER_TTL_MS} is dropped then.
 */
export interface ToolCarryover {
  /** Counts the times the store was dropped for a possible change of the workspace. */
  readonly epoch: number
  /**
   * Keep `value` under `key` (replacing what was there) until a call takes it. `dispose` runs
   * when the entry is dropped untaken, and must release what `value` holds. With `since` (an
   * {@link ToolCarryover.epoch} read when the work began), work that a possible change of the
   * workspace overtook is disposed at once instead of kept.
   */
  keep(key: string, value: unknown, dispose: () => void, since?: number): void
  /** Take (and remove) what is kept under `key`. */
  take(key: string): unknown
}

interface Entry {
  value: unknown
  dispose: () => void
  at: number
}

/** The kernel's {@link ToolCarryover}: a small map whose entries expire. */
export class Carryover implements ToolCarryover {
  private readonly entries = new Map<string, Entry>()
  private dropped = 0
  /** Sweeps expired entries while any are kept; never keeps a process alive. */
  private sweeper: ReturnType<typeof setTimeout> | undefined

  get epoch(): number {
    return this.dropped
  }

  keep(key: string, value: unknown, dispose: () => void, since?: number): void {
    this.expire()
    this.drop(key)
    if (since !== undefined && since !== this.dropped) return release(dispose)
    while (this.entries.size >= CARRYOVER_MAX_ENTRIES)
      this.drop(this.entries.keys().next().value as string)
    this.entries.set(key, { value, dispose, at: Date.now() })
    this.sweepLater()
  }

  take(key: string): unknown {
    this.expire()
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    this.entries.delete(key)
    return entry.value
  }

  /** Drop every entry (the workspace may change, or the session closes). */
  clear(): void {
    this.dropped++
    for (const key of [...this.entries.keys()]) this.drop(key)
    clearTimeout(this.sweeper)
    this.sweeper = undefined
  }

  private expire(): void {
    const now = Date.now()
    for (const [key, entry] of this.entries) if (now - entry.at >= CARRYOVER_TTL_MS) this.drop(key)
  }

  private sweepLater(): void {
    if (this.sweeper !== undefined || this.entries.size === 0) return
    const oldest = this.entries.values().next().value!.at
    this.sweeper = setTimeout(
      () => {
        this.sweeper = undefined
        this.expire()
        this.sweepLater()
      },
      Math.max(0, oldest + CARRYOVER_TTL_MS - Date.now()) + 1,
    )
    // In Node, a timer keeps the process alive unless unreferenced.
    ;(this.sweeper as { unref?: () => void }).unref?.()
  }

  private drop(key: string): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    this.entries.delete(key)
    release(entry.dispose)
  }
}

function release(dispose: () => void): void {
  try {
    dispose()
  } catch {
    // Releasing kept work must not fail the call that dropped it.
  }
}
