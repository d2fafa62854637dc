import { describe, expect, it } from 'vitest'
import {
  CAPTURE_HEAD_BYTES,
  CAPTURE_TAIL_BYTES,
  HeadTailCapture,
} from '../../src/text/head-tail-capture.ts'

const encoder = new TextEncoder()

/** A deterministic byte stream of `n` ASCII bytes. */
function asciiStream(n: number): Uint8Array {
  const out = new Uint8Array(n)
  for (let i = 0; i < n; i++) out[i] = 97 + ((i * 7 + (i >> 5)) % 26)
  return out
}

/** Push `bytes` in chunks of varying sizes. */
function pushChunks(capture: HeadTailCapture, bytes: Uint8Array, seed: number): void {
  let at = 0
  let k = seed
  while (at < bytes.length) {
    k = (k * 1103515245 + 12345) % 2147483648
    const size = 1 + (k % 70_000)
    capture.push(bytes.subarray(at, at + size))
    at += size
  }
}

describe('HeadTailCapture', () => {
  it('keeps everything below head + tail, exactly', () => {
    const bytes = asciiStream(CAPTURE_HEAD_BYTES + CAPTURE_TAIL_BYTES)
    const c = new HeadTailCapture()
    pushChunks(c, bytes, 1)
    const v = c.view()
    expect(v).toMatchObject({ truncated: false, omittedBytes: 0, tail: '' })
    expect(v.head).toBe(new TextDecoder().decode(bytes))
    expect(c.totalBytes).toBe(bytes.length)
    expect(c.truncated).toBe(false)
  })

  it('keeps the first 64 KiB and the last 36 KiB of a long stream, with exact counts', () => {
    for (const [n, seed] of [
      [CAPTURE_HEAD_BYTES + CAPTURE_TAIL_BYTES + 1, 2],
      [1_000_003, 3],
      [5_000_000, 4],
    ] as const) {
      const bytes = asciiStream(n)
      const c = new HeadTailCapture()
      pushChunks(c, bytes, seed)
      const v = c.view()
      const text = new TextDecoder().decode(bytes)
      expect(v.head).toBe(text.slice(0, CAPTURE_HEAD_BYTES))
      expect(v.tail).toBe(text.slice(n - CAPTURE_TAIL_BYTES))
      expect(v).toMatchObject({
        totalBytes: n,
        keptBytes: CAPTURE_HEAD_BYTES + CAPTURE_TAIL_BYTES,
        omittedBytes: n - CAPTURE_HEAD_BYTES - CAPTURE_TAIL_BYTES,
        omittedFrom: CAPTURE_HEAD_BYTES,
        truncated: true,
      })
      expect(c.capturedBytes).toBe(CAPTURE_HEAD_BYTES + CAPTURE_TAIL_BYTES)
    }
  })

  it('handles one chunk larger than the whole capture', () => {
    const bytes = asciiStream(300_000)
    const c = new HeadTailCapture(1000, 500)
    c.push(bytes)
    const v = c.view()
    const text = new TextDecoder().decode(bytes)
    expect(v.head).toBe(text.slice(0, 1000))
    expect(v.tail).toBe(text.slice(-500))
    expect(v.omittedBytes).toBe(300_000 - 1500)
  })

  it('never splits a UTF-8 sequence, and counts the partial bytes as omitted', () => {
    // 'é' is 2 bytes, '€' 3, '😀' 4: cuts land inside sequences for most sizes.
    const text = 'aé€😀'.repeat(50_000)
    const bytes = encoder.encode(text)
    for (const [head, tail] of [
      [1001, 1001],
      [1002, 1003],
      [7, 5],
    ] as const) {
      const c = new HeadTailCapture(head, tail)
      pushChunks(c, bytes, head)
      const v = c.view()
      expect(v.head).not.toContain('\uFFFD')
      expect(v.tail).not.toContain('\uFFFD')
      expect(text.startsWith(v.head)).toBe(true)
      expect(text.endsWith(v.tail)).toBe(true)
      const kept = encoder.encode(v.head).length + encoder.encode(v.tail).length
      expect(v.keptBytes).toBe(kept)
      expect(v.omittedBytes).toBe(bytes.length - kept)
      expect(v.omittedFrom).toBe(encoder.encode(v.head).length)
      expect(kept).toBeLessThanOrEqual(head + tail)
      expect(kept).toBeGreaterThan(head + tail - 8)
    }
  })

  it('can be viewed with a smaller head and tail, counts still exact', () => {
    const bytes = asciiStream(200_000)
    const c = new HeadTailCapture()
    c.push(bytes)
    const v = c.view(100, 50)
    const text = new TextDecoder().decode(bytes)
    expect(v.head).toBe(text.slice(0, 100))
    expect(v.tail).toBe(text.slice(-50))
    expect(v.omittedBytes).toBe(200_000 - 150)
    // A small stream that fits the capture but not a smaller view is cut too.
    const small = new HeadTailCapture()
    small.push(bytes.subarray(0, 1000))
    const sv = small.view(10, 20)
    expect(sv.head + sv.tail).toBe(text.slice(0, 10) + text.slice(980, 1000))
    expect(sv).toMatchObject({ truncated: true, omittedBytes: 970, omittedFrom: 10 })
  })

  it('decodes invalid bytes leniently and still counts bytes', () => {
    const c = new HeadTailCapture(4, 4)
    c.push(new Uint8Array([0xff, 0xfe, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49]))
    const v = c.view()
    expect(v.totalBytes).toBe(11)
    expect(v.tail).toBe('FGHI')
    expect(v.head.endsWith('AB')).toBe(true)
  })
})
