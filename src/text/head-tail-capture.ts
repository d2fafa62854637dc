import { utf8SafeTailStart } from './preview.ts'

/** Bytes a {@link HeadTailCapture} keeps from the start of a stream by default (64 KiB). */
export const CAPTURE_HEAD_BYTES = 65536
/** Bytes a {@link HeadTailCapture} keeps from the end of a stream by default (36 KiB). */
export const CAPTURE_TAIL_BYTES = 36864

const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true })

/**
 * Largest `end <= max` such that `bytes[0, end)` does not end inside a UTF-8 sequence, judged
 * from the bytes alone (the byte after `end` may be unknown: it can lie in a dropped range).
 */
function wholeSequencesLength(bytes: Uint8Array, max: number): number {
  const end = Math.max(0, Math.min(max, bytes.length))
  let i = end - 1
  let back = 0
  while (i >= 0 && back < 3 && (bytes[i]! & 0xc0) === 0x80) {
    i--
    back++
  }
  if (i < 0) return end
  const lead = bytes[i]!
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
  return i + length <= end ? end : i
}

/** A view of a capture: the text kept and exactly how much was left out, and where. */
export interface CapturedText {
  /** Kept text from the start of the stream (decoded leniently: invalid bytes become U+FFFD). */
  head: string
  /** Kept text from the end of the stream ('' when nothing was cut). */
  tail: string
  /** Every byte the stream carried. */
  totalBytes: number
  /** Bytes kept in `head` plus `tail`. */
  keptBytes: number
  /** Bytes left out between `head` and `tail` (`totalBytes - keptBytes`). */
  omittedBytes: number
  /** Byte offset in the stream where the omitted range starts (= bytes of `head`). */
  omittedFrom: number
  truncated: boolean
}

/**
 * Bounded capture of a byte stream: the first `headBytes` and the last `tailBytes`, with the
 * exact byte count of everything that passed. Memory stays at `headBytes + tailBytes` whatever
 * the stream's length; cuts never split a UTF-8 sequence (a partial sequence at a cut counts as
 * omitted).
 */
export class HeadTailCapture {
  readonly headLimit: number
  readonly tailLimit: number
  private readonly head: Uint8Array
  private headLength = 0
  private readonly ring: Uint8Array
  /** Bytes written to the ring in all (the ring holds the last `tailLimit` of them). */
  private ringWritten = 0
  private total = 0

  constructor(headBytes = CAPTURE_HEAD_BYTES, tailBytes = CAPTURE_TAIL_BYTES) {
    if (
      !Number.isInteger(headBytes) ||
      headBytes < 0 ||
      !Number.isInteger(tailBytes) ||
      tailBytes < 0
    )
      throw new RangeError('head and tail sizes must be non-negative integers')
    this.headLimit = headBytes
    this.tailLimit = tailBytes
    this.head = new Uint8Array(headBytes)
    this.ring = new Uint8Array(tailBytes)
  }

  /** Every byte pushed so far. */
  get totalBytes(): number {
    return this.total
  }

  /** Bytes held (head plus tail), before UTF-8 adjustment of the cut. */
  get capturedBytes(): number {
    return this.headLength + Math.min(this.ringWritten, this.tailLimit)
  }

  /** True once more bytes passed than the capture can hold. */
  get truncated(): boolean {
    return this.total > this.headLimit + this.tailLimit
  }

  /** Add a chunk of the stream. */
  push(chunk: Uint8Array): void {
    this.total += chunk.length
    let rest = chunk
    if (this.headLength < this.headLimit) {
      const take = Math.min(this.headLimit - this.headLength, rest.length)
      this.head.set(rest.subarray(0, take), this.headLength)
      this.headLength += take
      rest = rest.subarray(take)
    }
    if (rest.length === 0 || this.tailLimit === 0) {
      this.ringWritten += rest.length
      return
    }
    if (rest.length > this.tailLimit) {
      // Bytes that would be overwritten at once still move the ring's position.
      this.ringWritten += rest.length - this.tailLimit
      rest = rest.subarray(rest.length - this.tailLimit)
    }
    const at = this.ringWritten % this.tailLimit
    const first = Math.min(rest.length, this.tailLimit - at)
    this.ring.set(rest.subarray(0, first), at)
    if (first < rest.length) this.ring.set(rest.subarray(first), 0)
    this.ringWritten += rest.length
  }

  /** The bytes after the head that the ring still holds, oldest first. */
  private tailBytes(): Uint8Array {
    const held = Math.min(this.ringWritten, this.tailLimit)
    if (held < this.tailLimit) return this.ring.subarray(0, held)
    const at = this.ringWritten % this.tailLimit
    const out = new Uint8Array(held)
    out.set(this.ring.subarray(at), 0)
    out.set(this.ring.subarray(0, at), this.tailLimit - at)
    return out
  }

  /**
   * The captured text, optionally cut further to at most `maxHead` bytes of head and `maxTail`
   * bytes of tail (UTF-8 safe). Counts are exact bytes of the original stream.
   */
  view(maxHead = this.headLimit, maxTail = this.tailLimit): CapturedText {
    const headAll = this.head.subarray(0, this.headLength)
    const tailAll = this.tailBytes()
    const whole = this.total === headAll.length + tailAll.length
    if (whole && headAll.length + tailAll.length <= maxHead + maxTail) {
      const bytes = new Uint8Array(this.total)
      bytes.set(headAll, 0)
      bytes.set(tailAll, headAll.length)
      return {
        head: decoder.decode(bytes),
        tail: '',
        totalBytes: this.total,
        keptBytes: this.total,
        omittedBytes: 0,
        omittedFrom: this.total,
        truncated: false,
      }
    }
    // The stream as head ++ (gap) ++ tail; cut the head at maxHead and keep at most maxTail of
    // the end, never splitting a UTF-8 sequence.
    const headEnd = wholeSequencesLength(headAll, maxHead)
    let tail = tailAll
    if (whole && tail.length + headAll.length > headEnd) {
      // Nothing was dropped yet: the tail may reach back into the head's surplus.
      const joined = new Uint8Array(headAll.length - headEnd + tailAll.length)
      joined.set(headAll.subarray(headEnd), 0)
      joined.set(tailAll, headAll.length - headEnd)
      tail = joined
    }
    const from = utf8SafeTailStart(tail, tail.length - Math.min(Math.max(0, maxTail), tail.length))
    const kept = tail.subarray(from)
    const keptBytes = headEnd + kept.length
    return {
      head: decoder.decode(headAll.subarray(0, headEnd)),
      tail: decoder.decode(kept),
      totalBytes: this.total,
      keptBytes,
      omittedBytes: this.total - keptBytes,
      omittedFrom: headEnd,
      truncated: keptBytes < this.total,
    }
  }
}
