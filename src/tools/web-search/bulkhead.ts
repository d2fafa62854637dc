import { IsoagentError } from '../../errors.ts'

/** A bounded number of concurrent holders; others wait in order (or leave on their signal). */
export class Bulkhead {
  private active = 0
  private readonly queue: (() => void)[] = []

  constructor(readonly limit: number) {}

  get inUse(): number {
    return this.active
  }

  get waiting(): number {
    return this.queue.length
  }

  /** Wait for a slot; the returned function gives it back (call it once). */
  async acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) throw new IsoagentError('cancelled', 'cancelled while waiting for a page')
    if (this.active < this.limit) {
      this.active++
      return this.releaser()
    }
    await new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = (): void => {
        const i = this.queue.indexOf(grant)
        if (i >= 0) this.queue.splice(i, 1)
        reject(new IsoagentError('cancelled', 'cancelled while waiting for a page'))
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.queue.push(grant)
    })
    return this.releaser()
  }

  private releaser(): () => void {
    let done = false
    return () => {
      if (done) return
      done = true
      const next = this.queue.shift()
      if (next !== undefined) next()
      else this.active--
    }
  }
}
