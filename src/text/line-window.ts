import { IsoagentError } from '../errors.ts'
import { BINARY_SNIFF_BYTES, concatBytes, decodeUtf8 } from './bytes.ts'

/** One line of a {@link LineWindow}: display text (no line ending, no BOM). */
export interface WindowLine {
  text: string
  /** The line was longer than `maxLineChars` and was cut. */
  cut: boolean
  /** Bytes of the whole line, without its line ending. */
  bytes: number
}

/** Lines `[offset, offset + limit)` of a text, plus facts gathered from a full scan. */
export interface LineWindow {
  lines: WindowLine[]
  /**
   * Lines in the whole file (a final line without a newline counts) when `complete`; else the
   * lines counted before the scan stopped, a lower bound.
   */
  totalLines: number
  /** The whole file was scanned (see {@link LineWindowOptions.countBeyondBytes}). */
  complete: boolean
  totalBytes: number
  bom: boolean
  /** Line endings seen in the whole file. */
  eol: 'lf' | 'crlf' | 'mixed' | 'none'
}

/** Options for {@link LineWindowCollector}. */
export interface LineWindowOptions {
  offset: number
  limit: number
  /** Display cut, in UTF-16 code units (surrogate pairs never split). */
  maxLineChars: number
  /** Path for error messages. */
  path: string
  /**
   * After the window is filled, keep counting lines for at most this many more bytes, then stop
   * reading (default: count to the end).
   */
  countBeyondBytes?: number
}

/**
 * Consumes a file chunk by chunk and keeps only the requested window of lines, so a 1 GB file
 * or a 50 MB line never becomes one string. Refuses binary content (NUL in the first 8 KiB) and
 * invalid UTF-8 inside the window.
 */
export class LineWindowCollector {
  private readonly options: LineWindowOptions
  private readonly maxLineBytes: number
  private lineIndex = 0
  private lineBytes = 0
  private lineParts: Uint8Array[] = []
  private keptBytes = 0
  private sniffed = 0
  private totalBytes = 0
  private filledAt: number | undefined
  private prevByte = -1
  private lf = 0
  private crlf = 0
  private bom = false
  private readonly head: number[] = []
  private readonly lines: WindowLine[] = []

  constructor(options: LineWindowOptions) {
    this.options = options
    this.maxLineBytes = options.maxLineChars * 4 + 4
  }

  private inWindow(): boolean {
    return (
      this.lineIndex >= this.options.offset &&
      this.lineIndex < this.options.offset + this.options.limit
    )
  }

  /** Feed the next chunk. */
  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return
    if (this.sniffed < BINARY_SNIFF_BYTES) {
      const look = chunk.subarray(0, BINARY_SNIFF_BYTES - this.sniffed)
      if (look.indexOf(0) !== -1) {
        throw new IsoagentError(
          'binary_file',
          `${this.options.path} is a binary file (NUL byte in its first 8 KiB); text tools refuse it`,
          { data: { path: this.options.path } },
        )
      }
      for (let i = 0; this.head.length < 3 && i < chunk.length; i++) this.head.push(chunk[i]!)
      if (this.head.length === 3) {
        this.bom = this.head[0] === 0xef && this.head[1] === 0xbb && this.head[2] === 0xbf
      }
      this.sniffed += look.length
    }
    this.totalBytes += chunk.length
    let pos = 0
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos)
      const end = nl === -1 ? chunk.length : nl
      if (end > pos) {
        if (this.inWindow()) this.keep(chunk.subarray(pos, end))
        this.lineBytes += end - pos
        this.prevByte = chunk[end - 1]!
      }
      if (nl === -1) break
      if (this.prevByte === 13 && this.lineBytes > 0) this.crlf++
      else this.lf++
      this.endLine()
      pos = nl + 1
      this.prevByte = 10
    }
  }

  private keep(part: Uint8Array): void {
    const room = this.maxLineBytes - this.keptBytes
    if (room <= 0) return
    const slice = part.length > room ? part.subarray(0, room) : part
    this.lineParts.push(slice.slice())
    this.keptBytes += slice.length
  }

  private endLine(): void {
    if (this.inWindow()) this.lines.push(this.render())
    this.lineIndex++
    this.lineBytes = 0
    this.lineParts = []
    this.keptBytes = 0
  }

  private render(): WindowLine {
    let raw = this.lineParts.length === 1 ? this.lineParts[0]! : concatBytes(this.lineParts)
    const complete = this.keptBytes === this.lineBytes
    let bytes = this.lineBytes
    if (complete && raw.length > 0 && raw[raw.length - 1] === 13) {
      raw = raw.subarray(0, raw.length - 1)
      bytes--
    }
    if (this.lineIndex === 0 && this.bom) raw = raw.subarray(3)
    let text: string
    if (complete) text = decodeUtf8(raw, `${this.options.path} line ${this.lineIndex + 1}`)
    else {
      try {
        text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(raw, {
          stream: true,
        })
      } catch {
        text = decodeUtf8(raw, `${this.options.path} line ${this.lineIndex + 1}`)
      }
    }
    const max = this.options.maxLineChars
    if (text.length > max || !complete) {
      let cutAt = Math.min(max, text.length)
      const code = text.charCodeAt(cutAt - 1)
      if (code >= 0xd800 && code <= 0xdbff) cutAt--
      return { text: text.slice(0, cutAt), cut: true, bytes }
    }
    return { text, cut: false, bytes }
  }

  /** Finish after the last chunk. */
  finish(complete = true): LineWindow {
    if (complete && this.lineBytes > 0) this.endLine()
    const eol =
      this.lf === 0 && this.crlf === 0
        ? 'none'
        : this.crlf === 0
          ? 'lf'
          : this.lf === 0
            ? 'crlf'
            : 'mixed'
    return {
      lines: this.lines,
      totalLines: this.lineIndex,
      complete,
      totalBytes: this.totalBytes,
      bom: this.bom,
      eol,
    }
  }

  /** True once every window line has been seen (the rest only counts lines). */
  get windowFilled(): boolean {
    return this.lineIndex >= this.options.offset + this.options.limit
  }

  /** True when the window is filled and the counting allowance after it is used up. */
  get canStop(): boolean {
    if (!this.windowFilled) return false
    this.filledAt ??= this.totalBytes
    const beyond = this.options.countBeyondBytes
    return beyond !== undefined && this.totalBytes - this.filledAt >= beyond
  }
}

/**
 * The window of a file's bytes read at once: what {@link collectLineWindow} gives for a stream of
 * them in one chunk.
 */
export function lineWindowOf(
  bytes: Uint8Array,
  options: LineWindowOptions,
  signal?: AbortSignal,
): LineWindow {
  if (signal?.aborted)
    throw new IsoagentError('cancelled', 'read cancelled', { cause: signal.reason })
  const collector = new LineWindowCollector(options)
  collector.push(bytes)
  return collector.canStop ? collector.finish(false) : collector.finish()
}

/** Drain a byte stream into a {@link LineWindowCollector}. */
export async function collectLineWindow(
  stream: ReadableStream<Uint8Array>,
  options: LineWindowOptions,
  signal?: AbortSignal,
): Promise<LineWindow> {
  const collector = new LineWindowCollector(options)
  const reader = stream.getReader()
  try {
    for (;;) {
      if (signal?.aborted)
        throw new IsoagentError('cancelled', 'read cancelled', { cause: signal.reason })
      const { done, value } = await reader.read()
      if (done) break
      collector.push(value)
      if (collector.canStop) {
        await reader.cancel().catch(() => {})
        return collector.finish(false)
      }
    }
  } catch (error) {
    await reader.cancel().catch(() => {})
    throw error
  } finally {
    reader.releaseLock()
  }
  return collector.finish()
}
