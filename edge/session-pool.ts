/** Default most sessions an app holds at once (API and MCP sessions together). */
export const DEFAULT_MAX_SESSIONS = 64
/** Default time (ms) after which a session nobody uses is closed: 15 minutes. */
export const DEFAULT_SESSION_IDLE_MS = 15 * 60 * 1000

/** One session a {@link SessionPool} holds: an API session or an MCP session. */
export interface PooledSession {
  /** Its id, unique in the pool. */
  readonly id: string
  /** Whether it was closed (the pool then forgets it). */
  readonly closed: boolean
  /** How long (ms) it has been idle at `now`: 0 while a request, a call or a stream uses it. */
  idleMs(now: number): number
  /** Close it (idle, shutdown); the pool has already forgotten it. */
  close(): Promise<void>
}

/** Options of {@link SessionPool}. */
export interface SessionPoolOptions {
  /** Most sessions at once, opening ones included (default 64). */
  maxSessions?: number
  /** A session idle this long (ms) is closed (default 15 min). */
  idleMs?: number
}

/** A slot taken by {@link SessionPool.reserve} for a session being opened. */
export interface SessionSlot {
  /** Hold `session` in the slot (its id must be new to the pool). */
  fill(session: PooledSession): void
  /** Give the slot back unfilled (the open failed); a no-op once filled or released. */
  release(): void
}

type Timer = ReturnType<typeof setInterval> & { unref?: () => void }

/**
 * The sessions an app holds, of every kind, bounded by `maxSessions` and closed once idle for
 * `idleMs`: lazily when the pool is used, and by a sweep timer that runs only while sessions
 * exist and never keeps a Node process alive (it is unref'd). The HTTP API's sessions and the
 * MCP endpoint's sessions of one app share one pool, so `maxSessions` bounds them together.
 */
export class SessionPool {
  readonly maxSessions: number
  readonly idleMs: number
  private readonly sessions = new Map<string, PooledSession>()
  private opening = 0
  private timer: Timer | undefined
  private shutDown = false

  constructor(options: SessionPoolOptions = {}) {
    this.maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS
    this.idleMs = options.idleMs ?? DEFAULT_SESSION_IDLE_MS
    if (!Number.isInteger(this.maxSessions) || this.maxSessions < 1)
      throw new TypeError('maxSessions must be a positive integer')
    if (!(this.idleMs > 0)) throw new TypeError('sessionIdleMs must be a positive number')
  }

  /** Sessions held now (opening ones not counted). */
  get size(): number {
    return this.sessions.size
  }

  /** Whether {@link closeAll} ran: no session is taken any more. */
  get closing(): boolean {
    return this.shutDown
  }

  /**
   * Take a slot for a session about to be opened, after closing idle ones when the pool is full;
   * undefined when every slot is taken (or the pool is shut down). The slot counts until it is
   * filled or released, so a burst of opens cannot pass `maxSessions`.
   */
  reserve(): SessionSlot | undefined {
    if (this.shutDown) return undefined
    if (this.sessions.size + this.opening >= this.maxSessions) this.sweep()
    if (this.sessions.size + this.opening >= this.maxSessions) return undefined
    this.opening++
    let open = true
    const give = () => {
      if (!open) return false
      open = false
      this.opening--
      return true
    }
    return {
      fill: (session) => {
        if (!give()) throw new Error('this slot was already filled or released')
        this.sessions.set(session.id, session)
        this.startTimer()
      },
      release: () => void give(),
    }
  }

  /**
   * Seconds until a slot frees by idle time if nobody uses the sessions meanwhile (what a 429's
   * `Retry-After` says): the least idle time any held session still has to go, at least 1.
   */
  retryAfterSeconds(now = Date.now()): number {
    let soonest = this.idleMs
    for (const s of this.sessions.values())
      soonest = Math.min(soonest, Math.max(0, this.idleMs - s.idleMs(now)))
    return Math.max(1, Math.ceil(soonest / 1000))
  }

  /** The session with `id`, unless there is none or it has idled out (then it is closed). */
  get(id: string, now = Date.now()): PooledSession | undefined {
    const s = this.sessions.get(id)
    if (s === undefined) return undefined
    if (this.expired(s, now)) {
      this.drop(s)
      return undefined
    }
    return s
  }

  /** Forget `session` without closing it (it is being closed); false when it was not held. */
  forget(session: PooledSession): boolean {
    if (this.sessions.get(session.id) !== session) return false
    this.sessions.delete(session.id)
    if (this.sessions.size === 0) this.stopTimer()
    return true
  }

  /** Close every session that has idled out (or was closed elsewhere). */
  sweep(now = Date.now()): void {
    for (const s of this.sessions.values()) if (this.expired(s, now)) this.drop(s)
  }

  /** Refuse new sessions and close every held one (shutdown). */
  async closeAll(): Promise<void> {
    this.shutDown = true
    const all = [...this.sessions.values()]
    this.sessions.clear()
    this.stopTimer()
    await Promise.allSettled(all.map((s) => s.close()))
  }

  private expired(s: PooledSession, now: number): boolean {
    return s.closed || s.idleMs(now) >= this.idleMs
  }

  private drop(s: PooledSession): void {
    this.forget(s)
    void s.close().catch(() => undefined)
  }

  private startTimer(): void {
    if (this.timer !== undefined) return
    this.timer = setInterval(
      () => this.sweep(),
      Math.min(60_000, Math.max(50, this.idleMs / 2)),
    ) as Timer
    this.timer.unref?.()
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
  }
}
