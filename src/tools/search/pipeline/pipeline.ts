import { nextTurn } from '../../../event-loop.ts'
import type { ToolContext } from '../../../kernel/tool-spec.ts'
import { GROUP_MAX, GROUP_TARGET_FILES, TURN_MS } from '../tuning.ts'

/** Named counts a pipeline keeps as it goes. */
export type Counters<C> = { [K in keyof C]: number }

/**
 * A search's results in walk order, pulled one at a time: its walk, and the scans running ahead
 * of the result being consumed. A page that ends keeps it (under the cursor it returns) so the
 * next page continues it instead of walking again to the cursor and redoing the scans that had
 * run past the page's end. Continuing gives exactly what a fresh start at the cursor gives.
 */
export class SearchPipeline<T, C extends Counters<C>> {
  /** Items taken back by a page that ended on them, next out first (last in the array). */
  private readonly back: T[] = []
  /** The batch being consumed, and the next item of it. */
  private batch: readonly T[] = []
  private at = 0
  private consumer: AbortSignal | undefined
  private readonly onAbort = () => this.stop.abort()
  /** The counters at the last {@link SearchPipeline.countsSince}. */
  private reported: C
  /** When the event loop last had a turn (see {@link TURN_MS}). */
  private turnAt = Date.now()

  constructor(
    /** Results in walk order, in batches (as they become ready together). */
    private readonly source: AsyncGenerator<readonly T[], void>,
    /** Aborts the work running ahead. */
    private readonly stop: AbortController,
    /** What the pipeline counts as it goes (files walked, directories skipped, ...). */
    private readonly counters: C,
    /** {@link ToolCarryover.epoch} when the walk began. */
    readonly epoch: number,
    /**
     * What the pipeline's work depends on beyond the query and the cursor (content mode: the
     * page size, which caps each file's kept lines): a page asking for other work starts afresh.
     */
    readonly fits = '',
  ) {
    this.reported = { ...counters }
  }

  /** Serve `signal`'s call: its abort stops the work. */
  attach(signal: AbortSignal): void {
    this.consumer?.removeEventListener('abort', this.onAbort)
    this.consumer = signal
    if (signal.aborted) this.stop.abort()
    else signal.addEventListener('abort', this.onAbort, { once: true })
  }

  /**
   * The next item, or undefined at the end: at once while the batch at hand lasts, else a
   * promise. Await a promise before the next call.
   */
  next(): T | undefined | Promise<T | undefined> {
    if (this.back.length > 0) return this.back.pop()
    if (this.at < this.batch.length) return this.batch[this.at++]
    return this.refill()
  }

  private async refill(): Promise<T | undefined> {
    for (;;) {
      if (Date.now() - this.turnAt >= TURN_MS) {
        await nextTurn()
        this.turnAt = Date.now()
      }
      const step = await this.source.next()
      if (step.done === true) return undefined
      this.batch = step.value
      this.at = 0
      if (this.batch.length > 0) return this.batch[this.at++]
    }
  }

  /** Put back an item the current page will not use: it comes out next. */
  putBack(item: T): void {
    this.back.push(item)
  }

  /** How much each counter grew since the last call of this (for one page's metadata). */
  countsSince(): C {
    const now = { ...this.counters }
    const delta = { ...now }
    for (const key of Object.keys(now) as (keyof C)[])
      delta[key] = (now[key] - this.reported[key]) as C[keyof C]
    this.reported = now
    return delta
  }

  /**
   * End a page: with a next cursor, keep the pipeline for the page that continues from it;
   * otherwise stop it.
   */
  endPage(context: ToolContext, nextCursor: string | null): void {
    this.consumer?.removeEventListener('abort', this.onAbort)
    this.consumer = undefined
    if (nextCursor === null || this.stop.signal.aborted) return void this.close()
    context.carryover.keep(carryoverKey(nextCursor), this, () => void this.close(), this.epoch)
  }

  /** Stop the work running ahead and end the walk. */
  async close(): Promise<void> {
    this.consumer?.removeEventListener('abort', this.onAbort)
    this.consumer = undefined
    this.stop.abort()
    await this.source.return(undefined).catch(() => {})
  }
}

/**
 * `work`, marked as handled: work running ahead of a page may fail after the page (or the
 * pipeline) is gone, with nobody left to wait for it. Whoever does wait still sees the failure.
 */
export function ahead<T>(work: Promise<T>): Promise<T> {
  work.catch(() => {})
  return work
}

/** The carryover key of the pipeline that continues at `cursor`. */
function carryoverKey(cursor: string): string {
  return `search:${cursor}`
}

/** The pipeline a previous page kept for `cursor`, if any and if it `fits` this page. */
export function continuedPipeline<T, C extends Counters<C>>(
  context: ToolContext,
  cursor: string | undefined,
  fits = '',
): SearchPipeline<T, C> | undefined {
  if (cursor === undefined) return undefined
  const kept = context.carryover.take(carryoverKey(cursor))
  if (!(kept instanceof SearchPipeline)) return undefined
  if (kept.fits === fits) return kept as SearchPipeline<T, C>
  void kept.close()
  return undefined
}

/**
 * How many directories a search hands over to the scanner's threads in one request: one while
 * nothing is known, then about {@link GROUP_TARGET_FILES} files' worth by the sizes of those that
 * came back (a round trip costs more than walking a small directory; one request of several
 * large ones would leave the other threads idle and hold up the page).
 */
export class UnitGrouping {
  private meanFiles: number | undefined

  /** A handed-over directory came back with `files` files. */
  record(files: number): void {
    this.meanFiles = this.meanFiles === undefined ? files : 0.8 * this.meanFiles + 0.2 * files
  }

  get size(): number {
    if (this.meanFiles === undefined) return 1
    return Math.max(
      1,
      Math.min(GROUP_MAX, Math.floor(GROUP_TARGET_FILES / Math.max(1, this.meanFiles))),
    )
  }
}
