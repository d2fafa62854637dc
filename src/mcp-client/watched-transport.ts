import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { McpFetch } from './mcp-transports.ts'

/**
 * Called when the event stream answering a request ended (or broke) before the request's
 * response came and the server gave no event id to resume it by: that request will never be
 * answered (the server restarted, a proxy cut the connection).
 */
export type StreamLost = (why: string) => void

type RequestId = string | number

/** The id of a JSON-RPC request in a POST body, or undefined (a notification, not JSON). */
function requestIdOf(body: unknown): RequestId | undefined {
  if (typeof body !== 'string') return undefined
  try {
    const message = JSON.parse(body) as { id?: unknown; method?: unknown }
    const id = message.id
    return typeof message.method === 'string' && (typeof id === 'string' || typeof id === 'number')
      ? id
      : undefined
  } catch {
    return undefined
  }
}

/** The `requestId` of a `notifications/cancelled` POST body, or undefined. */
function cancelledIdOf(body: unknown): RequestId | undefined {
  if (typeof body !== 'string' || !body.includes('notifications/cancelled')) return undefined
  try {
    const message = JSON.parse(body) as { method?: unknown; params?: { requestId?: unknown } }
    const id = message.params?.requestId
    return message.method === 'notifications/cancelled' &&
      (typeof id === 'string' || typeof id === 'number')
      ? id
      : undefined
  } catch {
    return undefined
  }
}

/** Lines longer than this are not decoded: a data line answers `id` if it names it. */
const PARSED_LINE_BYTES = 64 * 1024
const NEWLINE = 0x0a
const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Whether `needle` occurs in `hay`. */
function holds(hay: Uint8Array, needle: Uint8Array): boolean {
  const first = needle[0]!
  for (let at = hay.indexOf(first); at >= 0 && at + needle.length <= hay.length;) {
    let k = 1
    while (k < needle.length && hay[at + k] === needle[k]) k++
    if (k === needle.length) return true
    at = hay.indexOf(first, at + 1)
  }
  return false
}

/**
 * Reads an SSE stream's bytes as they pass, in linear time and without a copy of a large event:
 * whether it carried an event id, and whether an event answered request `id`. Lines up to
 * {@link PARSED_LINE_BYTES} are decoded; a longer data line (a large result) counts as the answer
 * when it names the id.
 */
class SseScan {
  resumable = false
  answered = false
  private parts: Uint8Array[] = []
  private lineBytes = 0
  /** The current line is longer than {@link PARSED_LINE_BYTES}: only searched for the id. */
  private big: { data: boolean; tail: Uint8Array; namesId: boolean } | undefined
  private data: string[] = []
  private eventNamesId = false
  private readonly idToken: Uint8Array

  constructor(private readonly id: RequestId) {
    this.idToken = encoder.encode(`"id":${JSON.stringify(id)}`)
  }

  push(chunk: Uint8Array): void {
    let from = 0
    for (let nl = chunk.indexOf(NEWLINE); nl >= 0; nl = chunk.indexOf(NEWLINE, from)) {
      this.append(chunk.subarray(from, nl))
      this.endLine()
      from = nl + 1
    }
    if (from < chunk.length) this.append(chunk.subarray(from))
  }

  private append(bytes: Uint8Array): void {
    if (bytes.length === 0) return
    if (this.big === undefined && this.lineBytes + bytes.length <= PARSED_LINE_BYTES) {
      this.parts.push(bytes)
      this.lineBytes += bytes.length
      return
    }
    if (this.big === undefined) {
      const head = decoder.decode(this.joined().subarray(0, 5))
      const start = this.joined()
      this.big = { data: head === 'data:', tail: new Uint8Array(), namesId: false }
      this.parts = []
      this.search(start)
    }
    this.search(bytes)
  }

  private search(bytes: Uint8Array): void {
    const big = this.big!
    if (!big.data || big.namesId) return
    const window = new Uint8Array(big.tail.length + bytes.length)
    window.set(big.tail)
    window.set(bytes, big.tail.length)
    big.namesId = holds(window, this.idToken)
    big.tail = window.slice(Math.max(0, window.length - this.idToken.length + 1))
  }

  private joined(): Uint8Array {
    if (this.parts.length === 1) return this.parts[0]!
    const out = new Uint8Array(this.lineBytes)
    let at = 0
    for (const part of this.parts) {
      out.set(part, at)
      at += part.length
    }
    this.parts = [out]
    return out
  }

  private endLine(): void {
    const big = this.big
    if (big !== undefined) {
      this.eventNamesId ||= big.namesId
      this.big = undefined
    } else {
      const text = this.parts.length === 0 ? '' : decoder.decode(this.joined())
      this.line(text.endsWith('\r') ? text.slice(0, -1) : text)
    }
    this.parts = []
    this.lineBytes = 0
  }

  private line(line: string): void {
    if (line === '') return this.dispatch()
    if (line.startsWith('id:') && line.slice(3).trim() !== '') this.resumable = true
    else if (line.startsWith('data:')) this.data.push(line.slice(5).replace(/^ /, ''))
  }

  private dispatch(): void {
    if (this.eventNamesId) this.answered = true
    const text = this.data.join('\n')
    this.data = []
    this.eventNamesId = false
    if (text === '') return
    try {
      const message = JSON.parse(text) as { id?: unknown; result?: unknown; error?: unknown }
      if (message.id === this.id && ('result' in message || 'error' in message))
        this.answered = true
    } catch {
      // not JSON-RPC: the SDK reports it
    }
  }
}

/**
 * A fetch for the Streamable HTTP transport that watches the event stream answering each
 * request: when it ends or breaks without the response and without an event id (so the SDK
 * cannot resume it and the request would wait for its deadline), `lost` is called. Requests the
 * client cancelled (`notifications/cancelled`) are not reported: a server answers those never.
 */
export function watchedFetch(fetchFn: McpFetch, lost: StreamLost): McpFetch {
  const cancelled = new Set<RequestId>()
  return async (url, init) => {
    const body = init?.body
    const cancelledId = cancelledIdOf(body)
    if (cancelledId !== undefined) cancelled.add(cancelledId)
    const response = await fetchFn(url, init)
    const id = requestIdOf(body)
    const type = response.headers.get('content-type') ?? ''
    if (id === undefined || response.body === null || !type.includes('text/event-stream'))
      return response
    const scan = new SseScan(id)
    const reader = response.body.getReader()
    let gaveUp = false
    const ended = (why: string) => {
      if (gaveUp || scan.answered || scan.resumable || cancelled.delete(id)) return
      if (init?.signal?.aborted) return
      lost(why)
    }
    const watched = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read()
          if (done) {
            ended('the server ended the response stream without answering')
            controller.close()
            return
          }
          scan.push(value)
          controller.enqueue(value)
        } catch (error) {
          ended(`the response stream broke (${error instanceof Error ? error.message : error})`)
          controller.error(error)
        }
      },
      cancel(reason) {
        gaveUp = true
        return reader.cancel(reason)
      },
    })
    return new Response(watched, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
  }
}

/** A transport whose messages in flight can be awaited (before closing it). */
export interface TrackedTransport {
  transport: Transport
  /** Resolves when every message sent so far is written, or after `ms`. */
  flushed(ms: number): Promise<void>
}

/**
 * Track what `transport` sends, so that closing waits for messages already on their way (the
 * `notifications/cancelled` of calls aborted by the close itself) instead of cutting them off.
 */
export function trackSends(transport: Transport): TrackedTransport {
  const pending = new Set<Promise<void>>()
  const send = transport.send.bind(transport)
  transport.send = (message, options) => {
    const sent = send(message, options)
    pending.add(sent)
    void sent.catch(() => undefined).finally(() => pending.delete(sent))
    return sent
  }
  return {
    transport,
    async flushed(ms) {
      if (pending.size === 0) return
      let timer: ReturnType<typeof setTimeout> | undefined
      await Promise.race([
        Promise.allSettled([...pending]),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
      ])
      clearTimeout(timer)
    },
  }
}
