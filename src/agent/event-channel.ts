/**
 * A single-consumer queue between a producer that pushes and a consumer that iterates. The
 * producer never waits; `end()` (optionally with an error) finishes the iteration after the queued
 * values. `onReturn` runs when the consumer stops early.
 */
export class EventChannel<T> implements AsyncIterableIterator<T> {
  private readonly queue: T[] = []
  private wake: (() => void) | undefined
  private ended = false
  private error: unknown
  private readonly onReturn: () => void | Promise<void>

  constructor(onReturn: () => void | Promise<void> = () => {}) {
    this.onReturn = onReturn
  }

  push(value: T): void {
    if (this.ended) return
    this.queue.push(value)
    this.notify()
  }

  end(error?: unknown): void {
    if (this.ended) return
    this.ended = true
    this.error = error
    this.notify()
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this
  }

  async next(): Promise<IteratorResult<T>> {
    for (;;) {
      if (this.queue.length > 0) return { done: false, value: this.queue.shift()! }
      if (this.ended) {
        if (this.error !== undefined) {
          const error = this.error
          this.error = undefined
          throw error
        }
        return { done: true, value: undefined }
      }
      await new Promise<void>((resolve) => (this.wake = resolve))
    }
  }

  async return(): Promise<IteratorResult<T>> {
    if (!this.ended) {
      this.ended = true
      this.queue.length = 0
      await this.onReturn()
    }
    this.error = undefined
    return { done: true, value: undefined }
  }

  private notify(): void {
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }
}
