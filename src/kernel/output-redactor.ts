import type { Sanitizer } from './sanitize.ts'

/** A partial last line up to this many characters is held until its line ends. */
export const OUTPUT_LINE_HOLD = 4096
/** Most characters a stream holds back at once; past it the oldest go out (sanitised). */
export const OUTPUT_MAX_HOLD = 64 * 1024

/**
 * Redaction of a tool's streamed output (`tool_output_delta`), which arrives in chunks that may
 * cut a secret anywhere: each chunk is joined to what was held back, and only a prefix that no
 * secret can still reach goes out, sanitised. Held back at the end: a tail that begins a host
 * secret (`Sanitizer.heldTail`: at most the longest secret − 1), the partial last line (up to
 * {@link OUTPUT_LINE_HOLD}: a credential pattern's prefix such as `Bearer` or `-----BEGIN`),
 * and any match that runs to the end (it may go on); a match is never cut in two. Whatever is
 * held goes out at {@link OutputRedactor.flush} (the end of the call). Redaction is literal: a
 * secret printed encoded (base64, hex, reversed) is not recognised.
 */
export class OutputRedactor {
  private pending = ''

  constructor(private readonly sanitizer: Sanitizer) {}

  /** The sanitised part of `delta` (with what was held) that can go out now; may be ''. */
  push(delta: string): string {
    const text = this.pending + delta
    const cut = this.safeCut(text)
    this.pending = text.slice(cut)
    return cut === 0 ? '' : this.sanitizer.text(text.slice(0, cut))
  }

  /** Whatever is still held, sanitised. */
  flush(): string {
    const text = this.pending
    this.pending = ''
    return text === '' ? '' : this.sanitizer.text(text)
  }

  /** Where `text` may be cut: no secret or credential match crosses it or can still grow past it. */
  private safeCut(text: string): number {
    const end = text.length
    let cut = end - this.sanitizer.heldTail(text)
    const lineStart = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r')) + 1
    if (end - lineStart <= OUTPUT_LINE_HOLD) cut = Math.min(cut, lineStart)
    const from = Math.max(0, end - OUTPUT_MAX_HOLD)
    const spans = this.sanitizer.spans(from === 0 ? text : text.slice(from))
    // Latest first: moving the cut back to a match's start can only reach earlier matches.
    spans.sort((a, b) => b.start - a.start)
    for (const { start, end: stop } of spans) {
      const at = from + start
      if (from + stop === end || (at < cut && from + stop > cut)) cut = Math.min(cut, at)
    }
    return Math.max(0, cut, end - OUTPUT_MAX_HOLD)
  }
}
