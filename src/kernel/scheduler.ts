import { IsoagentError } from '../errors.ts'

/** What a queued caller can be cancelled by (a `KernelCall`). */
export interface Cancellable {
  readonly aborted: boolean
  /** Call `listener` once at cancellation; returns the function that stops listening. */
  onAbort(listener: () => void): () => void
}

/** A counting semaphore whose waiters can be cancelled. */
class Semaphore {
  private active = 0
  private readonly waiters: { resolve: () => void; reject: (e: unknown) => void }[] = []
  constructor(private readonly limit: number) {}

  async acquire(signal: Cancellable): Promise<() => void> {
    if (signal.aborted) throw new IsoagentError('cancelled', 'cancelled while queued')
    if (this.active < this.limit) {
      this.active++
      return this.releaser()
    }
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        resolve: () => {
          unlink()
          resolve()
        },
        reject,
      }
      const unlink = signal.onAbort(() => {
        const at = this.waiters.indexOf(waiter)
        if (at !== -1) this.waiters.splice(at, 1)
        reject(new IsoagentError('cancelled', 'cancelled while queued'))
      })
      this.waiters.push(waiter)
    })
    this.active++
    return this.releaser()
  }

  private releaser(): () => void {
    let released = false
    return () => {
      if (released) return
      released = true
      this.active--
      this.waiters.shift()?.resolve()
    }
  }
}

/**
 * The run queue: each tool runs at most its declared `max_parallelism` calls at once, and the
 * session at most `maxConcurrent` calls in all. Waiting calls can be cancelled.
 */
export class Scheduler {
  private readonly perTool = new Map<string, Semaphore>()
  private readonly session: Semaphore

  constructor(maxConcurrent = 32) {
    this.session = new Semaphore(maxConcurrent)
  }

  /** Wait for a slot for `tool`; resolves to the function that frees it. */
  async slot(
    tool: string,
    maxParallelism: number,
    signal: Cancellable,
    nested: boolean,
  ): Promise<() => void> {
    let sem = this.perTool.get(tool)
    if (sem === undefined) {
      sem = new Semaphore(Math.max(1, maxParallelism))
      this.perTool.set(tool, sem)
    }
    const releaseTool = await sem.acquire(signal)
    // Nested calls run inside a parent that already holds a session slot: never make them wait
    // on it, or a full queue of parents would deadlock on their children.
    if (nested) return releaseTool
    try {
      const releaseSession = await this.session.acquire(signal)
      return () => {
        releaseSession()
        releaseTool()
      }
    } catch (error) {
      releaseTool()
      throw error
    }
  }
}
