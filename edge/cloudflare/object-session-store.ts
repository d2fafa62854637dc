import type { Session } from '../../adapters/index.ts'
import { ApiError } from '../http/api-error.ts'
import { HostedSession, type EventHistoryLimits } from '../http/hosted-session.ts'
import type { SessionStore } from '../http/session-store.ts'

/** Options of {@link objectSessionStore}. */
export interface ObjectSessionStoreOptions {
  /** The id the object's session gets (the name its Durable Object was addressed by). */
  assignedId: () => string | undefined
  /** A session without requests or event streams for this long (ms) is closed. */
  sessionIdleMs: number
  eventHistory?: EventHistoryLimits
  /** Runs once after the session is closed, whatever closed it (DELETE, idle, shutdown). */
  onClosed: (id: string) => Promise<void>
}

/** A store with the session of one Durable Object (at most one, under its assigned id). */
export interface ObjectSessionStore extends SessionStore {
  /** The session held (even an idle one not yet closed). */
  readonly current: HostedSession | undefined
  /** Close the session if it is closed or idle; true when it did (or there is none). */
  closeIfIdle(now?: number): Promise<boolean>
  /**
   * Hold `session`, resumed from its snapshot after the object lost it from memory, under `id`;
   * its events are numbered on after `lastSeq`.
   */
  restore(id: string, session: Session, lastSeq: number): HostedSession
}

/**
 * The store of a session's Durable Object: it holds the one session the object was created
 * for, closes it once idle (checked on use and by the object's alarm) and reports the close.
 */
export function objectSessionStore(options: ObjectSessionStoreOptions): ObjectSessionStore {
  let current: HostedSession | undefined
  const idle = (s: HostedSession, now: number) => s.closed || s.idleMs(now) >= options.sessionIdleMs
  const drop = async (s: HostedSession) => {
    if (current === s) current = undefined
    await s.close()
    await options.onClosed(s.id)
  }
  return {
    get current() {
      return current
    },
    get size() {
      return current === undefined ? 0 : 1
    },
    async create(open: (id: string) => Promise<Session>) {
      const id = options.assignedId()
      if (id === undefined || current !== undefined)
        throw new ApiError(409, 'session_closed', 'this object already held a session')
      const session = await open(id)
      current = new HostedSession(id, session, options.eventHistory)
      return current
    },
    get(id) {
      if (current === undefined || current.id !== id) return undefined
      if (idle(current, Date.now())) {
        void drop(current).catch(() => undefined)
        return undefined
      }
      return current
    },
    async delete(id) {
      if (current === undefined || current.id !== id) return false
      await drop(current)
      return true
    },
    async closeIfIdle(now = Date.now()) {
      if (current === undefined) return true
      if (!idle(current, now)) return false
      await drop(current)
      return true
    },
    async closeAll() {
      if (current !== undefined) await drop(current)
    },
    restore(id, session, lastSeq) {
      if (current !== undefined)
        throw new ApiError(409, 'session_closed', 'this object already holds a session')
      current = new HostedSession(id, session, options.eventHistory, Date.now(), lastSeq)
      return current
    },
  }
}
