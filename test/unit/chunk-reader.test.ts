import { describe, expect, it } from 'vitest'
import { chunkReader } from '../../src/tools/search/bytes/chunk-reader.ts'

/** A byte stream of `data` in pieces of at most `piece` bytes, written into the reader's view. */
function byteStream(data: Uint8Array, piece: number): ReadableStream<Uint8Array> {
  let at = 0
  return new ReadableStream({
    type: 'bytes',
    pull(controller) {
      const request = controller.byobRequest!
      const view = request.view!
      const n = Math.min(piece, view.byteLength, data.length - at)
      if (n === 0) {
        controller.close()
        request.respond(0)
        return
      }
      new Uint8Array(view.buffer, view.byteOffset, n).set(data.subarray(at, at + n))
      at += n
      request.respond(n)
    },
  })
}

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7) % 251)

async function collect(stream: ReadableStream<Uint8Array>, size: number) {
  const reader = chunkReader(stream, size)
  const seen: number[][] = []
  const lengths: number[] = []
  try {
    for (let chunk = await reader.read(); chunk !== undefined; chunk = await reader.read()) {
      lengths.push(chunk.length)
      seen.push([...chunk])
    }
  } finally {
    await reader.close()
  }
  return { all: seen.flat(), lengths }
}

describe('chunkReader', () => {
  it('reads a byte stream into its own buffer, chunk by chunk, and a plain stream as it comes', async () => {
    const data = bytes(10_000)
    for (const piece of [1, 999, 4096, 20_000]) {
      const { all, lengths } = await collect(byteStream(data, piece), 4096)
      expect(all).toEqual([...data])
      expect(Math.max(...lengths)).toBeLessThanOrEqual(Math.min(piece, 4096))
    }
    const plain = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(data.subarray(0, 10))
        controller.enqueue(new Uint8Array(0))
        controller.enqueue(data.subarray(10))
        controller.close()
      },
    })
    const { all, lengths } = await collect(plain, 4096)
    expect(all).toEqual([...data])
    expect(lengths).toEqual([10, 9990])
  })

  it('hands out each chunk in memory the next read reuses, and the buffer to the next reader', async () => {
    const reader = chunkReader(byteStream(bytes(9000), 4096), 4096)
    const first = (await reader.read())!
    expect(first.length).toBe(4096)
    const second = (await reader.read())!
    // The first chunk's memory went back into the stream for the second.
    expect(first.length).toBe(0)
    expect(second[0]).toBe(bytes(9000)[4096])
    await reader.close()
    const again = chunkReader(byteStream(bytes(10), 4096), 4096)
    expect([...(await again.read())!]).toEqual([...bytes(10)])
    expect(await again.read()).toBeUndefined()
    await again.close()
  })

  it('rejects with the stream error', async () => {
    const failing = new ReadableStream({
      type: 'bytes',
      pull(controller) {
        controller.error(new Error('disk gone'))
      },
    })
    const reader = chunkReader(failing, 64)
    await expect(reader.read()).rejects.toThrow('disk gone')
    await reader.close()
  })
})
