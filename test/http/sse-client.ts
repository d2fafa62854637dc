/** One parsed server-sent event. */
export interface SseFrame {
  event: string
  id: string | undefined
  data: string
}

/**
 * A minimal `text/event-stream` reader over a fetch response (the test's own parser, so the
 * suite checks the wire format rather than trusting a client library).
 */
export class SseReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>
  private readonly decoder = new TextDecoder()
  private buffer = ''
  private pending: SseFrame[] = []
  done = false

  constructor(response: Response) {
    if (response.body === null) throw new Error('no body')
    this.reader = response.body.getReader()
  }

  /** The next frame, or undefined once the stream ended. Rejects after `timeoutMs`. */
  async next(timeoutMs = 10_000): Promise<SseFrame | undefined> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const frame = this.pending.shift()
      if (frame !== undefined) return frame
      if (this.done) return undefined
      const left = deadline - Date.now()
      if (left <= 0) throw new Error('timed out waiting for an event')
      let timer: ReturnType<typeof setTimeout> | undefined
      const chunk = await Promise.race([
        this.reader.read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timed out waiting for an event')), left)
        }),
      ]).finally(() => clearTimeout(timer))
      if (chunk.done) this.done = true
      else this.parse(this.decoder.decode(chunk.value, { stream: true }))
    }
  }

  /** Frames until `until` matches one (that one included). */
  async collect(until: (frame: SseFrame) => boolean, timeoutMs = 10_000): Promise<SseFrame[]> {
    const frames: SseFrame[] = []
    for (;;) {
      const frame = await this.next(timeoutMs)
      if (frame === undefined) return frames
      frames.push(frame)
      if (until(frame)) return frames
    }
  }

  async close(): Promise<void> {
    await this.reader.cancel().catch(() => {})
  }

  private parse(text: string): void {
    this.buffer += text
    for (;;) {
      const end = this.buffer.indexOf('\n\n')
      if (end < 0) return
      const block = this.buffer.slice(0, end)
      this.buffer = this.buffer.slice(end + 2)
      let event = 'message'
      let id: string | undefined
      const data: string[] = []
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const field = colon < 0 ? line : line.slice(0, colon)
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
        if (field === 'event') event = value
        else if (field === 'id') id = value
        else if (field === 'data') data.push(value)
      }
      if (data.length > 0) this.pending.push({ event, id, data: data.join('\n') })
    }
  }
}
