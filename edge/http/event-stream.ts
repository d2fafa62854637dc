import type { HostedSession, SequencedEvent } from './hosted-session.ts'

/** Seconds between SSE comment lines that keep idle connections (and proxies) open. */
export const SSE_HEARTBEAT_MS = 15_000
/** Events a slow stream may have waiting; past it they are dropped for a replay notice. */
export const SSE_QUEUE_EVENTS = 1024

const encoder = new TextEncoder()

const frame = (e: SequencedEvent) => `event: ${e.type}\nid: ${e.seq}\ndata: ${e.data}\n\n`
const dropped = (count: number) =>
  `event: events_dropped\ndata: ${JSON.stringify({ type: 'events_dropped', count, timestamp: Date.now() })}\n\n`

type Timer = ReturnType<typeof setInterval> & { unref?: () => void }

/**
 * The session's events as a `text/event-stream` body: first what the history still holds after
 * `lastEventId` (an `events_dropped` frame without an id stands for what it no longer holds),
 * then live events until the session closes or the client goes away. The stream counts as use
 * of the session, so a watched session does not idle out.
 */
export function eventStream(
  hosted: HostedSession,
  lastEventId: number | undefined,
  signal: AbortSignal,
): ReadableStream<Uint8Array> {
  let queue: string[] = [': isoagent events\n\n']
  let queuedEvents = 0
  let droppedEvents = 0
  let ended = false
  let wake: (() => void) | undefined
  const notify = () => {
    const w = wake
    wake = undefined
    w?.()
  }
  const push = (event: SequencedEvent) => {
    if (queuedEvents >= SSE_QUEUE_EVENTS) {
      droppedEvents += queuedEvents
      queue = []
      queuedEvents = 0
    }
    queue.push(frame(event))
    queuedEvents++
  }
  const { replay, unsubscribe } = hosted.subscribe(lastEventId, (event) => {
    if (event === null) ended = true
    else push(event)
    notify()
  })
  droppedEvents += replay.missed
  for (const e of replay.events) push(e)
  hosted.enter()
  const heartbeat = setInterval(() => {
    queue.push(': ping\n\n')
    notify()
  }, SSE_HEARTBEAT_MS) as Timer
  heartbeat.unref?.()
  let finished = false
  const finish = () => {
    if (finished) return
    finished = true
    ended = true
    clearInterval(heartbeat)
    unsubscribe()
    hosted.leave()
    signal.removeEventListener('abort', finish)
    notify()
  }
  signal.addEventListener('abort', finish, { once: true })
  if (signal.aborted) finish()

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (queue.length === 0 && droppedEvents === 0 && !ended)
        await new Promise<void>((r) => (wake = r))
      if (queue.length > 0 || droppedEvents > 0) {
        const chunk = (droppedEvents > 0 ? dropped(droppedEvents) : '') + queue.join('')
        queue = []
        queuedEvents = 0
        droppedEvents = 0
        controller.enqueue(encoder.encode(chunk))
        return
      }
      finish()
      controller.close()
    },
    cancel() {
      finish()
    },
  })
}
