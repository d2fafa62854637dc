/** The listeners of one signal behind the single `abort` listener this module adds to it. */
interface Fan {
  readonly listeners: Set<() => void>
  readonly fire: () => void
}

const fans = new WeakMap<AbortSignal, Fan>()

/**
 * Call `listener` once when `signal` aborts; returns the function that stops listening (call it
 * when the work it guards settles). However many calls listen to one signal at once (10,000
 * children of one `program`, 200 calls sharing a caller's signal, every call of a session on its
 * closing signal), the signal carries a single `abort` listener of this module: Node warns
 * (`MaxListenersExceededWarning`) past 10 listeners on one signal. A listener is dropped by the
 * function returned (or when it fires), so none keeps its call alive; the module's own listener
 * stays on the signal while it lives (one per signal, holding an empty set), so a signal that
 * outlives many calls (a session's closing signal, a caller's) is not relistened per call.
 *
 * A signal already aborted never calls a listener added now: check `signal.aborted` first.
 */
export function onAbort(signal: AbortSignal, listener: () => void): () => void {
  let fan = fans.get(signal)
  if (fan === undefined) fan = open(signal)
  fan.listeners.add(listener)
  const joined = fan
  return () => {
    joined.listeners.delete(listener)
  }
}

function open(signal: AbortSignal): Fan {
  const listeners = new Set<() => void>()
  const fire = () => {
    if (fans.get(signal) === fan) fans.delete(signal)
    for (const listener of [...listeners]) {
      listeners.delete(listener)
      try {
        listener()
      } catch (error) {
        // One listener's failure must not keep the others from hearing of the abort.
        queueMicrotask(() => {
          throw error
        })
      }
    }
  }
  const fan: Fan = { listeners, fire }
  fans.set(signal, fan)
  signal.addEventListener('abort', fire, { once: true })
  return fan
}
