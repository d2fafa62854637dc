import type { Session, SessionEvent } from '../../adapters/index.ts'

/** Bounds of the per-session event history that `Last-Event-ID` replays from. */
export interface EventHistoryLimits {
  /** Most events held (default 1024). */
  maxEvents?: number
  /** Most bytes of event JSON held (default 4 MiB); the oldest go first. */
  maxBytes?: number
}

/** Default bounds of the event history. */
export const DEFAULT_EVENT_HISTORY: Required<EventHistoryLimits> = {
  maxEvents: 1024,
  maxBytes: 4 * 1024 * 1024,
}

/** One event as held and streamed: its sequence number (the SSE `id`), type and JSON. */
export interface SequencedEvent {
  seq: number
  type: string
  data: string
}

/** What a subscriber gets on subscribing: the replay, and how many asked-for events are gone. */
export interface EventReplay {
  events: SequencedEvent[]
  /** Events after `lastEventId` that the history no longer holds (0 when nothing was lost). */
  missed: number
}

/**
 * A session served over HTTP: the core `Session`, the bounded history of its events (numbered
 * from 1, so `Last-Event-ID` can replay what a reconnecting client missed), the live listeners
 * of its event streams, and the activity the idle timeout looks at.
 */
export class HostedSession {
  readonly id: string
  readonly session: Session
  readonly createdAt: number
  private lastActive: number
  private inFlight = 0
  private seq = 0
  private readonly history: SequencedEvent[] = []
  private historyBytes = 0
  private readonly limits: Required<EventHistoryLimits>
  private readonly listeners = new Set<(event: SequencedEvent | null) => void>()
  private closing: Promise<void> | undefined

  /**
   * `startSeq` is the number of the last event a previous holder of this session sent (a
   * session resumed from its snapshot numbers on from there, so `Last-Event-ID` still works).
   */
  constructor(
    id: string,
    session: Session,
    limits: EventHistoryLimits = {},
    now = Date.now(),
    startSeq = 0,
  ) {
    this.id = id
    this.seq = startSeq
    this.session = session
    this.createdAt = now
    this.lastActive = now
    this.limits = {
      maxEvents: Math.max(1, limits.maxEvents ?? DEFAULT_EVENT_HISTORY.maxEvents),
      maxBytes: Math.max(1, limits.maxBytes ?? DEFAULT_EVENT_HISTORY.maxBytes),
    }
    // Subscribing now (not on the first await) means no event of the session is missed.
    void this.pump(session.events())
  }

  get closed(): boolean {
    return this.closing !== undefined
  }

  /** The sequence number of the newest event (0 before the first). */
  get lastSeq(): number {
    return this.seq
  }

  /** A request (or an event stream) starts using the session. */
  enter(): void {
    this.inFlight++
  }

  /** A request (or an event stream) is done with the session. */
  leave(now = Date.now()): void {
    this.inFlight = Math.max(0, this.inFlight - 1)
    this.lastActive = now
  }

  /** How long the session has been idle: 0 while a request or an event stream uses it. */
  idleMs(now = Date.now()): number {
    return this.inFlight > 0 ? 0 : now - this.lastActive
  }

  /**
   * Listen to events from now on, after a replay of the held events newer than `lastEventId`
   * (none when it is undefined). `listener(null)` marks the end of the session's events.
   */
  subscribe(
    lastEventId: number | undefined,
    listener: (event: SequencedEvent | null) => void,
  ): { replay: EventReplay; unsubscribe: () => void } {
    let replay: EventReplay = { events: [], missed: 0 }
    if (lastEventId !== undefined && lastEventId < this.seq) {
      const events = this.history.filter((e) => e.seq > lastEventId)
      const first = events[0]?.seq ?? this.seq + 1
      replay = { events, missed: Math.max(0, first - lastEventId - 1) }
    }
    if (this.closed) {
      queueMicrotask(() => listener(null))
      return { replay, unsubscribe: () => {} }
    }
    this.listeners.add(listener)
    return { replay, unsubscribe: () => this.listeners.delete(listener) }
  }

  /** Close the core session (aborting its calls and confirmations) and end every stream. */
  close(): Promise<void> {
    this.closing ??= this.session.close().finally(() => this.end())
    return this.closing
  }

  private async pump(events: AsyncIterableIterator<SessionEvent>): Promise<void> {
    try {
      for await (const event of events) this.record(event)
    } finally {
      this.end()
    }
  }

  private record(event: SessionEvent): void {
    const entry: SequencedEvent = { seq: ++this.seq, type: event.type, data: JSON.stringify(event) }
    this.history.push(entry)
    this.historyBytes += entry.data.length
    while (
      this.history.length > this.limits.maxEvents ||
      (this.historyBytes > this.limits.maxBytes && this.history.length > 1)
    ) {
      this.historyBytes -= this.history.shift()!.data.length
    }
    for (const listener of this.listeners) listener(entry)
  }

  private end(): void {
    for (const listener of this.listeners) listener(null)
    this.listeners.clear()
  }
}
