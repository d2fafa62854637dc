// Waiting on the event loop, the same way in every runtime (Web-standard timers only).

/**
 * Wait `ms` milliseconds, or less when `signal` aborts first. Never rejects: resolves `true`
 * when the time passed and `false` when the signal aborted (at once if it already had), so the
 * caller decides what an abort means. The abort listener is removed either way.
 */
export function delay(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false)
  if (ms <= 0) return Promise.resolve(true)
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer)
      resolve(false)
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * Let the event loop run what is due (I/O, timers, other requests), then go on. A chain of
 * promises never lets an event in; code that may hold the thread for long awaits this between
 * pieces of work.
 */
export function nextTurn(): Promise<void> {
  // A timer, not a `MessageChannel` message: workerd delivers a message without letting another
  // request of the isolate in, so only a timer yields there.
  return new Promise((resolve) => setTimeout(resolve, 0))
}
