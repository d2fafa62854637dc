import { concatBytes } from '../text/bytes.ts'
import type { ByteSource } from './object-store.ts'

/** How {@link guardBody} checks and clips a body. */
export interface GuardOptions {
  /** Bytes the body must have, checked when it ends. */
  expected: number | undefined
  /** Bytes to drop first, and at most how many to pass on (a range the store ignored). */
  skip: number
  take: number | undefined
  /** The typed error of a body that failed. */
  fail(error: unknown): Error
  /** The typed error of a body that ended after `received` of `expected` bytes. */
  short(received: number, expected: number): Error
}

const bytesOf = (value: ArrayBufferView | ArrayBuffer): Uint8Array =>
  value instanceof ArrayBuffer
    ? new Uint8Array(value)
    : new Uint8Array(value.buffer, value.byteOffset, value.byteLength)

/**
 * `source` passed on chunk by chunk as plain `Uint8Array`s, failing with a typed error when it
 * errors or ends short of its announced length; cancelling it cancels the source.
 */
export function guardBody(source: ByteSource, options: GuardOptions): ReadableStream<Uint8Array> {
  const reader = source.getReader()
  let received = 0
  let skip = options.skip
  let left = options.take ?? Number.POSITIVE_INFINITY
  /** The next chunk to pass on, `'done'` at the end, `'error'` when the controller was failed. */
  async function next(
    controller: ReadableStreamDefaultController<Uint8Array>,
  ): Promise<Uint8Array | 'done' | 'error'> {
    for (;;) {
      if (left <= 0) {
        await reader.cancel().catch(() => {})
        return 'done'
      }
      let step: { done: boolean; value?: ArrayBufferView | ArrayBuffer }
      try {
        step = await reader.read()
      } catch (error) {
        controller.error(options.fail(error))
        return 'error'
      }
      if (step.done) {
        if (options.expected === undefined || received === options.expected) return 'done'
        controller.error(options.short(received, options.expected))
        return 'error'
      }
      if (step.value === undefined) continue
      let chunk = bytesOf(step.value)
      received += chunk.length
      if (skip > 0) {
        const dropped = Math.min(skip, chunk.length)
        skip -= dropped
        chunk = chunk.subarray(dropped)
      }
      if (chunk.length > left) chunk = chunk.subarray(0, left)
      left -= chunk.length
      if (chunk.length > 0) return chunk
    }
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = await next(controller)
      if (chunk === 'done') controller.close()
      else if (chunk !== 'error') controller.enqueue(chunk)
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => {})
    },
  })
}

/** All of `stream`'s bytes in one array (the only chunk itself, when it is a whole buffer). */
export async function collectBytes(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  const reader = stream.getReader()
  for (let step = await reader.read(); !step.done; step = await reader.read())
    chunks.push(step.value)
  const only = chunks[0]
  if (chunks.length === 1 && only!.byteOffset === 0 && only!.byteLength === only!.buffer.byteLength)
    return only!
  return concatBytes(chunks)
}
