import type { ToolErrorKind } from '../tool-result.ts'
import type { Origin } from './origin.ts'

/** Lifecycle state of a call. */
export type CallState =
  | 'created'
  | 'admitted'
  | 'gate_pending'
  | 'running'
  | 'completed'
  | 'rejected'
  | 'cancelled'
  | 'failed'

interface CallEventBase {
  toolName: string
  callId: string
  origin: Origin
  /** Milliseconds since the epoch. */
  timestamp: number
  /** The call that started this one (batch, program), if any. */
  parentCallId?: string
}

/** Everything a session reports, as a discriminated union on `type`. */
export type SessionEvent =
  | (CallEventBase & { type: 'tool_state'; state: CallState })
  | (CallEventBase & { type: 'tool_start'; args: unknown })
  | (CallEventBase & { type: 'tool_output_delta'; delta: string })
  | (CallEventBase & {
      type: 'tool_end'
      state: 'completed' | 'rejected' | 'cancelled' | 'failed'
      exitCode: number
      errorKind?: ToolErrorKind
      durationMs: number
      outputBytes: number
    })
  | (CallEventBase & {
      type: 'confirmation_required'
      confirmationId: string
      args: unknown
      /** Why the tool itself asks (e.g. `bash` with `require_escalated`), when it does. */
      reason?: string
    })
  | (CallEventBase & { type: 'permission_denied'; rule?: string; reason: string })
  | (CallEventBase & { type: 'hook_denied'; hook: 'preToolUse'; reason: string })
  | (CallEventBase & { type: 'hook_error'; hook: 'preToolUse' | 'postToolUse'; message: string })
  | (CallEventBase & { type: 'budget_exhausted'; reason: string })
  | { type: 'events_dropped'; count: number; timestamp: number }
  | SkillEvent
  | WorkflowStepEvent

/** A `dynamic_workflow` step as its run journals it (the output stays in the journal). */
export type WorkflowStepEvent =
  | {
      type: 'workflow_step_started'
      run_id: string
      step_id: string
      attempt: number
      timestamp: number
    }
  | {
      type: 'workflow_step_completed'
      run_id: string
      step_id: string
      attempt: number
      timestamp: number
    }
  | {
      type: 'workflow_step_failed'
      run_id: string
      step_id: string
      attempt: number
      error: string
      timestamp: number
    }

/** A skill's use: its body loaded, a child run started and finished (`Skill` tool). */
export type SkillEvent =
  | { type: 'skill_loaded'; skill: string; timestamp: number }
  | { type: 'skill_started'; skill: string; timestamp: number }
  /** `exitCode`: 0 when the child run answered, 1 when it failed. */
  | { type: 'skill_finished'; skill: string; timestamp: number; exitCode?: number }

/** Default events a slow subscriber may have waiting before the oldest are dropped. */
export const DEFAULT_EVENT_BUFFER = 1024

interface Subscriber {
  queue: SessionEvent[]
  dropped: number
  wake?: () => void
  closed: boolean
}

/**
 * Fan-out of session events to any number of async-iterable subscribers. Emitting never waits
 * for a consumer: each subscriber has a bounded buffer and, when it is full, the oldest events
 * are dropped and counted; the subscriber then receives one `events_dropped` event with the count
 * before the events that follow.
 */
export class EventHub {
  private readonly subscribers = new Set<Subscriber>()
  private readonly capacity: number
  private sanitize: (event: SessionEvent) => SessionEvent = (e) => e

  constructor(capacity = DEFAULT_EVENT_BUFFER) {
    this.capacity = Math.max(1, capacity)
  }

  /** Sanitiser applied once to every event before it is queued. */
  setSanitizer(sanitize: (event: SessionEvent) => SessionEvent): void {
    this.sanitize = sanitize
  }

  get hasSubscribers(): boolean {
    return this.subscribers.size > 0
  }

  emit(event: SessionEvent): void {
    if (this.subscribers.size === 0) return
    const clean = this.sanitize(event)
    for (const sub of this.subscribers) {
      if (sub.queue.length >= this.capacity) {
        sub.queue.shift()
        sub.dropped++
      }
      sub.queue.push(clean)
      sub.wake?.()
    }
  }

  /** End every subscription (their iterators finish after draining). */
  close(): void {
    for (const sub of this.subscribers) {
      sub.closed = true
      sub.wake?.()
    }
    this.subscribers.clear()
  }

  /** A new subscription receiving events emitted from now on. */
  subscribe(signal?: AbortSignal): AsyncIterableIterator<SessionEvent> {
    const sub: Subscriber = { queue: [], dropped: 0, closed: false }
    this.subscribers.add(sub)
    const end = () => {
      sub.closed = true
      this.subscribers.delete(sub)
      sub.wake?.()
    }
    signal?.addEventListener('abort', end, { once: true })
    const iterator: AsyncIterableIterator<SessionEvent> = {
      [Symbol.asyncIterator]() {
        return iterator
      },
      async next(): Promise<IteratorResult<SessionEvent>> {
        for (;;) {
          if (sub.dropped > 0) {
            const count = sub.dropped
            sub.dropped = 0
            return { done: false, value: { type: 'events_dropped', count, timestamp: Date.now() } }
          }
          const event = sub.queue.shift()
          if (event !== undefined) return { done: false, value: event }
          if (sub.closed) return { done: true, value: undefined }
          await new Promise<void>((resolve) => (sub.wake = resolve))
          sub.wake = undefined
        }
      },
      async return(): Promise<IteratorResult<SessionEvent>> {
        end()
        return { done: true, value: undefined }
      },
    }
    return iterator
  }
}
