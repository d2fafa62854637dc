/**
 * `AbortSignal.timeout(ms)` that fires even when only a signal derived from it
 * (`AbortSignal.any([..., it])`) is listened to. Node collects a timeout signal that has no
 * listener of its own — and its timer with it — so a deadline combined with `any` could silently
 * never fire (a stalled download then hung until the test's own timeout). A listener of its own
 * keeps it until it fires; its timer still does not keep a process alive.
 */
export function timeoutSignal(ms: number): AbortSignal {
  const signal = AbortSignal.timeout(ms)
  signal.addEventListener('abort', keepAlive, { once: true })
  return signal
}

function keepAlive(): void {}
