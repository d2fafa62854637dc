import type { Session } from '../../adapters/index.ts'
import { ApiError } from './api-error.ts'
import { SessionPool } from '../session-pool.ts'
import { HostedSession, type EventHistoryLimits } from './hosted-session.ts'

export { DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_MS } from '../session-pool.ts'

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
  /**
   * The pool the sessions are held in (and counted and idled out by), e.g. one shared with the
   * MCP endpoint; `maxSessions` and `sessionIdleMs` are then the pool's. Default: a pool of
   * their own.
   */
  pool?: SessionPool
  /** Bounds of each session's event history. */
  eventHistory?: EventHistoryLimits
  /** A fresh session id (default `crypto.randomUUID()`). */
  newId?: () => string
}

const tooMany = (pool: SessionPool) =>
  new ApiError(
    429,
    'too_many_sessions',
    `this server holds at most ${pool.maxSessions} sessions; close one (DELETE /v1/sessions/:id) or wait for an idle one to expire`,
    { 'retry-after': String(pool.retryAfterSeconds()) },
  )
const shuttingDown = () => new ApiError(503, 'shutting_down', 'this server is shutting down')

/**
 * Sessions held in this isolate or process, in a {@link SessionPool}: bounded by `maxSessions`,
 * closed once idle for `sessionIdleMs` (lazily on use, and by the pool's unref'd sweep timer).
 */
export function memorySessionStore(options: MemorySessionStoreOptions = {}): SessionStore {
  const pool =
    options.pool ??
    new SessionPool({
      ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
      ...(options.sessionIdleMs !== undefined ? { idleMs: options.sessionIdleMs } : {}),
    })
  const newId = options.newId ?? (() => crypto.randomUUID())
  const mine = new Set<HostedSession>()
  const pending = new Set<Promise<unknown>>()
  let shutDown = false
  const held = (id: string): HostedSession | undefined => {
    const s = pool.get(id)
    return s instanceof HostedSession && mine.has(s) ? s : undefined
  }

  return {
    get size() {
      for (const s of mine) if (s.closed || pool.get(s.id) !== s) mine.delete(s)
      return mine.size
    },
    async create(open) {
      if (shutDown || pool.closing) throw shuttingDown()
      const slot = pool.reserve()
      if (slot === undefined) throw pool.closing ? shuttingDown() : tooMany(pool)
      let session: Session
      const id = newId()
      const opened = open(id)
      pending.add(opened)
      try {
        session = await opened
      } catch (error) {
        slot.release()
        throw error
      } finally {
        pending.delete(opened)
      }
      if (shutDown || pool.closing) {
        slot.release()
        await session.close().catch(() => undefined)
        throw shuttingDown()
      }
      const hosted = new HostedSession(id, session, options.eventHistory)
      for (const s of mine) if (s.closed) mine.delete(s)
      mine.add(hosted)
      slot.fill(hosted)
      return hosted
    },
    get: held,
    async delete(id) {
      const s = held(id)
      if (s === undefined) return false
      pool.forget(s)
      mine.delete(s)
      await s.close()
      return true
    },
    async closeAll() {
      shutDown = true
      await Promise.allSettled([...pending])
      const all = [...mine]
      mine.clear()
      for (const s of all) pool.forget(s)
      await Promise.allSettled(all.map((s) => s.close()))
    },
  }
}
