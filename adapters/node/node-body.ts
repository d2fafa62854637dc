import type { Readable } from 'node:stream'

/** Chunks a Web body holds before its Node stream is paused. */
const QUEUED_CHUNKS = 8

interface Source {
  stream: Readable
  /** Set once the Web side has pulled, been cancelled, or the stream was claimed. */
  taken: boolean
}

/** The Node stream behind each Web body the Node transport made, until one side takes it. */
const sources = new WeakMap<ReadableStream<Uint8Array>, Source>()

/**
 * A Web stream over a Node stream, paused while the reader is behind. Nothing flows until the
 * first read (high-water mark 0), so {@link claimNodeBody} can still take the Node stream
 * instead. (Node 20's `Readable.toWeb` throws an uncaught "Controller is already closed" when a
 * reader cancels while data is still arriving.)
 */
export function webBody(stream: Readable): ReadableStream<Uint8Array> {
  let settled = false
  const source: Source = { stream, taken: false }
  // Until a reader or a claimer listens, an error (a cancel destroys the stream) goes nowhere.
  stream.on('error', () => undefined)
  const attach = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (stream.destroyed) {
      // It failed (or was closed) before anyone read: its error went to the placeholder listener.
      settled = true
      controller.error(stream.errored ?? new Error('the response body closed before its end'))
      return
    }
    stream.on('data', (chunk: Buffer) => {
      if (settled) return
      controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
      if ((controller.desiredSize ?? 0) <= -QUEUED_CHUNKS) stream.pause()
    })
    stream.once('end', () => {
      if (settled) return
      settled = true
      controller.close()
    })
    stream.once('error', (error) => {
      if (settled) return
      settled = true
      controller.error(error)
    })
    stream.once('close', () => {
      if (settled) return
      settled = true
      controller.error(new Error('the response body closed before its end'))
    })
  }
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (!source.taken) {
          source.taken = true
          attach(controller)
        }
        stream.resume()
      },
      cancel() {
        source.taken = true
        settled = true
        stream.destroy()
      },
    },
    { highWaterMark: 0 },
  )
  sources.set(body, source)
  return body
}

/**
 * The Node stream behind `body` when the Node transport made it and no one has read from it,
 * cancelled it or claimed it yet; the caller then owns the stream (and must destroy it on
 * failure) and the Web body must no longer be read. Otherwise undefined.
 */
export function claimNodeBody(body: ReadableStream<Uint8Array>): Readable | undefined {
  const source = sources.get(body)
  if (source === undefined || source.taken || body.locked) return undefined
  source.taken = true
  return source.stream
}
