// Answers to a guest's tool calls over shared memory: the host writes a batch into a
// SharedArrayBuffer and wakes the worker, which waits for it with `Atomics.wait` instead of a turn
// of its event loop. Used where a worker may block (Node worker threads); a batch that does not
// fit, or arrives while the last one is unread, goes by message as before, and the worker then
// returns to its event loop (woken by `Atomics.waitAsync` or the message, whichever comes first).

/** Int32 slots of the header: a counter bumped at every host signal, the buffer's state, the length. */
const SIGNAL = 0
const STATE = 1
const LENGTH = 2
const HEADER_BYTES = 16
const EMPTY = 0
const FULL = 1

/** Bytes of answer JSON one batch may hold in shared memory (larger ones go by message). */
export const ANSWER_CHANNEL_BYTES = 256 * 1024

/** One answer: the call's id and its JSON result. */
export interface ChannelAnswer {
  id: number
  json: string
}

/** A new channel's shared memory (posted to the worker in `init`). */
export function createAnswerBuffer(bytes = ANSWER_CHANNEL_BYTES): SharedArrayBuffer {
  return new SharedArrayBuffer(HEADER_BYTES + bytes)
}

type WaitAsync = (
  array: Int32Array,
  index: number,
  value: number,
) => { async: boolean; value: Promise<unknown> | unknown }

/** `Atomics.waitAsync` (ES2024), where the runtime has it. */
const waitAsync = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync

/** Whether this runtime can serve a channel (shared memory and `Atomics.waitAsync`). */
export const answerChannelSupported = (): boolean =>
  typeof SharedArrayBuffer === 'function' && typeof waitAsync === 'function'

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** The host's end: write a batch, or signal that something else (a message) was sent. */
export class AnswerWriter {
  private readonly header: Int32Array
  private readonly data: Uint8Array

  constructor(buffer: SharedArrayBuffer) {
    this.header = new Int32Array(buffer, 0, HEADER_BYTES / 4)
    this.data = new Uint8Array(buffer, HEADER_BYTES)
  }

  /** Write `answers` if they fit and the last batch was read; false: send them by message. */
  write(answers: ChannelAnswer[]): boolean {
    if (Atomics.load(this.header, STATE) !== EMPTY) return false
    const bytes = encoder.encode(JSON.stringify(answers))
    if (bytes.length > this.data.length) return false
    this.data.set(bytes)
    Atomics.store(this.header, LENGTH, bytes.length)
    Atomics.store(this.header, STATE, FULL)
    this.signal()
    return true
  }

  /** Wake the worker from a wait (a message it must read was posted). */
  signal(): void {
    Atomics.add(this.header, SIGNAL, 1)
    Atomics.notify(this.header, SIGNAL)
  }
}

/** The worker's end. */
export class AnswerReader {
  private readonly header: Int32Array
  private readonly data: Uint8Array

  constructor(buffer: SharedArrayBuffer) {
    this.header = new Int32Array(buffer, 0, HEADER_BYTES / 4)
    this.data = new Uint8Array(buffer, HEADER_BYTES)
  }

  private take(): ChannelAnswer[] | undefined {
    if (Atomics.load(this.header, STATE) !== FULL) return undefined
    const length = Atomics.load(this.header, LENGTH)
    const answers = JSON.parse(decoder.decode(this.data.slice(0, length))) as ChannelAnswer[]
    Atomics.store(this.header, STATE, EMPTY)
    return answers
  }

  /**
   * Block up to `timeoutMs` for a batch. Undefined when none came: the host signalled something
   * else (a message to read), or the time ran out; the caller returns to its event loop.
   */
  wait(timeoutMs: number): ChannelAnswer[] | undefined {
    const seen = Atomics.load(this.header, SIGNAL)
    const ready = this.take()
    if (ready !== undefined) return ready
    Atomics.wait(this.header, SIGNAL, seen, Math.max(0, timeoutMs))
    return this.take()
  }

  /** Resolves at the host's next signal (for a caller that waits in its event loop). */
  async changed(): Promise<void> {
    if (Atomics.load(this.header, STATE) === FULL) return
    const seen = Atomics.load(this.header, SIGNAL)
    const waited = waitAsync!(this.header, SIGNAL, seen)
    if (waited.async) await waited.value
  }
}
