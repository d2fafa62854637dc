import { IsoagentError, type AgentEvent } from '../../adapters/index.ts'
import { SSE_HEARTBEAT_MS } from './event-stream.ts'
import type { HostedSession } from './hosted-session.ts'

const encoder = new TextEncoder()

type Timer = ReturnType<typeof setInterval> & { unref?: () => void }

/**
 * An agent turn's events as a `text/event-stream` body: `event: <type>`, `id: <n>` (from 1),
 * `data: <AgentEvent JSON>`, ending after `finish`, or after an `error` frame
 * (`{ type: 'error', error: { code, message } }`) when the turn fails. The client going away
 * cancels the turn. The stream counts as use of the session.
 */
export function messageStream(
  hosted: HostedSession,
  events: AsyncIterableIterator<AgentEvent>,
  signal: AbortSignal,
): ReadableStream<Uint8Array> {
  let seq = 0
  let heartbeat: Timer | undefined
  let finished = false
  hosted.enter()
  const stop = () => {
    if (finished) return
    finished = true
    if (heartbeat !== undefined) clearInterval(heartbeat)
    signal.removeEventListener('abort', cancel)
    hosted.leave()
  }
  const cancel = () => {
    void events.return?.()
  }
  signal.addEventListener('abort', cancel, { once: true })
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text))
        } catch {
          cancel()
        }
      }
      heartbeat = setInterval(() => send(': ping\n\n'), SSE_HEARTBEAT_MS) as Timer
      heartbeat.unref?.()
      send(': isoagent agent turn\n\n')
      try {
        for await (const event of events)
          send(`event: ${event.type}\nid: ${++seq}\ndata: ${JSON.stringify(event)}\n\n`)
      } catch (error) {
        const e =
          error instanceof IsoagentError
            ? { code: error.code, message: error.message }
            : { code: 'internal', message: 'the turn failed' }
        send(`event: error\nid: ${++seq}\ndata: ${JSON.stringify({ type: 'error', error: e })}\n\n`)
      } finally {
        stop()
        try {
          controller.close()
        } catch {
          // already cancelled by the client
        }
      }
    },
    cancel() {
      cancel()
    },
  })
}
