import { SPARE_CHUNK_BUFFERS } from '../tuning.ts'

/** Reads a stream's chunks one after another; see {@link chunkReader}. */
export interface ChunkReader {
  /** The next chunk, valid only until the next call; undefined at the end. */
  read(): Promise<Uint8Array | undefined>
  /** Stop reading and give the buffer back (call once, in a `finally`). */
  close(): Promise<void>
}

/** Buffers given back by readers of this thread, for the next ones. */
const spare: ArrayBuffer[] = []

/**
 * Read `stream` chunk by chunk. A byte stream is read with a BYOB reader into one buffer of
 * `size` bytes, reused for every chunk and by the next reader on this thread: a scan of a large
 * file allocates no memory per chunk. Other streams are read as they come.
 */
export function chunkReader(stream: ReadableStream<Uint8Array>, size: number): ChunkReader {
  let byob: ReadableStreamBYOBReader | undefined
  try {
    byob = stream.getReader({ mode: 'byob' })
  } catch {
    byob = undefined
  }
  if (byob === undefined) {
    const reader = stream.getReader()
    return {
      async read() {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) return undefined
          if (value.length > 0) return value
        }
      },
      close: () => reader.cancel().catch(() => {}),
    }
  }
  const reader = byob
  let buffer: ArrayBuffer | undefined = takeSpare(size)
  return {
    async read() {
      for (;;) {
        if (buffer === undefined) return undefined
        const { done, value } = await reader.read(new Uint8Array(buffer, 0, size))
        // The buffer moved into the stream and comes back as the chunk's.
        buffer = value?.buffer as ArrayBuffer | undefined
        if (done) return undefined
        if (value.length > 0) return value
      }
    },
    async close() {
      const back = buffer
      buffer = undefined
      if (back !== undefined && back.byteLength === size && spare.length < SPARE_CHUNK_BUFFERS)
        spare.push(back)
      await reader.cancel().catch(() => {})
    },
  }
}

function takeSpare(size: number): ArrayBuffer {
  const i = spare.findIndex((b) => b.byteLength === size)
  return i === -1 ? new ArrayBuffer(size) : spare.splice(i, 1)[0]!
}
