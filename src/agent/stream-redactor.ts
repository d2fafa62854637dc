/**
 * Redaction of text that arrives in pieces: a secret split over two deltas is still caught.
 * Each piece is sanitised together with what was held back, and a tail that could be the start
 * of a secret is held until the next piece (or {@link StreamRedactor.flush}).
 */
export class StreamRedactor {
  private pending = ''

  constructor(
    private readonly sanitize: (text: string) => string,
    private readonly secrets: readonly string[],
  ) {}

  /** The part of `delta` (with what was held) that is safe to show now. */
  push(delta: string): string {
    const out = this.sanitize(this.pending + delta)
    const keep = this.heldTail(out)
    this.pending = out.slice(out.length - keep)
    return out.slice(0, out.length - keep)
  }

  /** Whatever is still held, sanitised. */
  flush(): string {
    const out = this.pending === '' ? '' : this.sanitize(this.pending)
    this.pending = ''
    return out
  }

  /** Length of the longest suffix of `text` that is a proper prefix of a secret. */
  private heldTail(text: string): number {
    let best = 0
    for (const secret of this.secrets) {
      for (let n = Math.min(secret.length - 1, text.length); n > best; n--) {
        if (text.endsWith(secret.slice(0, n))) {
          best = n
          break
        }
      }
    }
    return best
  }
}
