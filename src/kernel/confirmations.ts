import { IsoagentError } from '../errors.ts'
import type { Origin } from './origin.ts'

/** A call waiting for a human to approve or refuse it. */
export interface PendingConfirmation {
  id: string
  callId: string
  toolName: string
  args: unknown
  origin: Origin
  requestedAt: number
  /** Why the tool itself asks (e.g. `bash` with `require_escalated`), when it does. */
  reason?: string
}

/**
 * How a confirmation ended. `unavailable`: nobody was asked, because whoever answers for the
 * session cannot ask anyone (an MCP client without elicitation); it is not a refusal.
 */
export type ConfirmationOutcome = 'approved' | 'refused' | 'timed_out' | 'cancelled' | 'unavailable'

/** A confirmation's outcome, with why it was `unavailable`. */
export interface ConfirmationAnswer {
  outcome: ConfirmationOutcome
  why?: string
}

const ANSWERED_MEMORY = 4096

/** Pending confirmations of a session and their answers. */
export class Confirmations {
  private readonly pending = new Map<
    string,
    { entry: PendingConfirmation; settle: (answer: ConfirmationAnswer) => void }
  >()
  private readonly answered = new Set<string>()
  private counter = 0

  list(): PendingConfirmation[] {
    return [...this.pending.values()].map((p) => ({ ...p.entry }))
  }

  /** Register a confirmation and wait for its outcome (answer, timeout or cancellation). */
  request(
    entry: Omit<PendingConfirmation, 'id' | 'requestedAt'>,
    timeoutMs: number,
    signal: AbortSignal,
    onCreated: (entry: PendingConfirmation) => void,
  ): Promise<ConfirmationAnswer> {
    const id = `confirm_${(++this.counter).toString(36)}_${Math.random().toString(36).slice(2, 8)}`
    const full: PendingConfirmation = { ...entry, id, requestedAt: Date.now() }
    return new Promise<ConfirmationAnswer>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const settle = (answer: ConfirmationAnswer) => {
        if (!this.pending.delete(id)) return
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        this.remember(id)
        resolve(answer)
      }
      const onAbort = () => settle({ outcome: 'cancelled' })
      this.pending.set(id, { entry: full, settle })
      if (signal.aborted) return settle({ outcome: 'cancelled' })
      signal.addEventListener('abort', onAbort, { once: true })
      if (Number.isFinite(timeoutMs))
        timer = setTimeout(() => settle({ outcome: 'timed_out' }), timeoutMs)
      onCreated(full)
    })
  }

  /** Answer a pending confirmation; throws `not_found` for unknown ids, `invalid_argument` for answered ones. */
  answer(id: string, approved: boolean): void {
    this.pendingOf(id).settle({ outcome: approved ? 'approved' : 'refused' })
  }

  /**
   * Settle a pending confirmation that nobody can be asked about (`why`: who cannot ask, and
   * why). Throws like {@link Confirmations.answer}.
   */
  unavailable(id: string, why: string): void {
    this.pendingOf(id).settle({ outcome: 'unavailable', why })
  }

  private pendingOf(id: string) {
    const pending = this.pending.get(id)
    if (pending === undefined) {
      if (this.answered.has(id)) {
        throw new IsoagentError(
          'invalid_argument',
          `confirmation ${id} was already answered, timed out or cancelled`,
          {
            data: { id, reason: 'already_answered' },
          },
        )
      }
      throw new IsoagentError(
        'not_found',
        `no pending confirmation with id ${JSON.stringify(id)}`,
        { data: { id, reason: 'unknown' } },
      )
    }
    return pending
  }

  private remember(id: string): void {
    this.answered.add(id)
    if (this.answered.size > ANSWERED_MEMORY)
      this.answered.delete(this.answered.values().next().value as string)
  }
}
