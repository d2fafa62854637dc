import { IsoagentError } from '../../errors.ts'
import type { GitBackend } from '../../workspace/git-backend.ts'

/** The error a stopped git call rejects with: the signal's own IsoagentError, else `cancelled`. */
export function gitStoppedError(signal: AbortSignal): IsoagentError {
  const reason: unknown = signal.reason
  if (IsoagentError.is(reason, 'cancelled', 'timeout')) return reason
  return new IsoagentError('cancelled', 'git was cancelled', { cause: reason })
}

/**
 * `backend` whose operations never resolve with what they read once `stopped()` (the call's
 * signal has aborted and the call may still be stopped): an operation that starts or ends
 * stopped, or fails while stopped, rejects with the stop reason, after `onStopped` when it ran.
 */
export function stoppableGitBackend(
  backend: GitBackend,
  signal: AbortSignal,
  stopped: () => boolean,
  onStopped: () => void = () => {},
): GitBackend {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(backend)) {
    out[key] =
      typeof value !== 'function' || key === 'withSignal'
        ? value
        : async (...args: unknown[]) => {
            if (stopped()) throw gitStoppedError(signal)
            try {
              const result: unknown = await (value as (...a: unknown[]) => Promise<unknown>)(
                ...args,
              )
              if (stopped()) throw gitStoppedError(signal)
              return result
            } catch (error) {
              if (!stopped()) throw error
              onStopped()
              throw gitStoppedError(signal)
            }
          }
  }
  return out as unknown as GitBackend
}
