import type { Session } from '../../adapters/index.ts'
import { ApiError } from './api-error.ts'
import { HostedSession, type EventHistoryLimits } from './hosted-session.ts'

/** Default most sessions an app holds at once. */
export const DEFAULT_MAX_SESSIONS = 64
/** Default time (ms) after which a session nobody uses is closed: 15 minutes. */
export const DEFAULT_SESSION_IDLE_MS = 15 * 60 * 1000

/**
 * Where an app keeps its sessions. The default ({@link memorySessionStore}) holds them in the
 * process; a Worker can instead keep each session in its own Durable Object, behind a store
 * that holds that one session.
 */
export interface SessionStore {
  /**
   * Open a session: take a slot (or throw `ApiError` 429 `too_many_sessions`), run `open` for
   * the core session and hold it under a new id.
   */
  create(open: (id: string) => Promise<Session>): Promise<HostedSession>
  /** The session with `id`, unless it does not exist, was closed or idled out. */
  get(id: string): HostedSession | undefined
  /** Close and forget a session; false when there was none. */
  delete(id: string): Promise<boolean>
  /** Sessions held now. */
  readonly size: number
  /** Close every session, including those still opening, and refuse new ones (shutdown). */
  closeAll(): Promise<void>
}

/** Options of {@link memorySessionStore}. */
export interface MemorySessionStoreOptions {
  /** Most sessions at once (default 64); one more is refused with 429. */
  maxSessions?: number
  /** A session without requests or event streams for this long is closed (default 15 min). */
  sessionIdleMs?: number
  /** Bounds of each session's event history. */
  eventHistory?: EventHistoryLimits
  /** A fresh session id (default `crypto.randomUUID()`). */
  newId?: () => string
}

type Timer = ReturnType<typeof setInterval> & { unref?: () => void }

/**
 * Sessions held in this isolate or process. Idle sessions are closed lazily when the store is
 * used and by a sweep timer that runs only while sessions exist and never keeps a Node process
 * alive (it is unref'd).
 */
export function memorySessionStore(options: MemorySessionStoreOptions = {}): SessionStore {
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS
  if (!Number.isInteger(maxSessions) || maxSessions < 1)
    throw new TypeError('maxSessions must be a positive integer')
  if (!(idleMs > 0)) throw new TypeError('sessionIdleMs must be a positive number')
  const newId = options.newId ?? (() => crypto.randomUUID())
  const sessions = new Map<string, HostedSession>()
  let opening = 0
  const pending = new Set<Promise<unknown>>()
  let shutDown = false
  let timer: Timer | undefined

  const expired = (s: HostedSession, now: number) => s.closed || s.idleMs(now) >= idleMs
  const drop = (s: HostedSession) => {
    sessions.delete(s.id)
    void s.close().catch(() => undefined)
    if (sessions.size === 0 && timer !== undefined) {
      clearInterval(timer)
      timer = undefined
    }
  }
  const sweep = () => {
    const now = Date.now()
    for (const s of sessions.values()) if (expired(s, now)) drop(s)
  }
  const startTimer = () => {
    if (timer !== undefined) return
    timer = setInterval(sweep, Math.min(60_000, Math.max(50, idleMs / 2))) as Timer
    timer.unref?.()
  }

  return {
    get size() {
      return sessions.size
    },
    async create(open) {
      if (shutDown) throw new ApiError(503, 'shutting_down', 'this server is shutting down')
      if (sessions.size + opening >= maxSessions) sweep()
      if (sessions.size + opening >= maxSessions) {
        throw new ApiError(
          429,
          'too_many_sessions',
          `this server holds at most ${maxSessions} sessions; close one (DELETE /v1/sessions/:id) or wait for an idle one to expire`,
        )
      }
      opening++
      let session: Session
      const id = newId()
      const opened = open(id)
      pending.add(opened)
      try {
        session = await opened
      } finally {
        opening--
        pending.delete(opened)
      }
      if (shutDown) {
        await session.close().catch(() => undefined)
        throw new ApiError(503, 'shutting_down', 'this server is shutting down')
      }
      const hosted = new HostedSession(id, session, options.eventHistory)
      sessions.set(id, hosted)
      startTimer()
      return hosted
    },
    get(id) {
      const s = sessions.get(id)
      if (s === undefined) return undefined
      if (expired(s, Date.now())) {
        drop(s)
        return undefined
      }
      return s
    },
    async delete(id) {
      const s = sessions.get(id)
      if (s === undefined) return false
      sessions.delete(id)
      if (sessions.size === 0 && timer !== undefined) {
        clearInterval(timer)
        timer = undefined
      }
      await s.close()
      return true
    },
    async closeAll() {
      shutDown = true
      await Promise.allSettled([...pending])
      const all = [...sessions.values()]
      sessions.clear()
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
      await Promise.allSettled(all.map((s) => s.close()))
    },
  }
}
