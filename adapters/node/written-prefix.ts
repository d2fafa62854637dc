/**
 * The parts of a file written so far, as sorted, disjoint `[start, end)` spans, and the length
 * of the part written without a gap from byte 0. Writes of one download land in a few growing
 * spans (one per range), so the list stays short.
 */
export class WrittenPrefix {
  private spans: [number, number][] = []

  /** Bytes written without a gap from byte 0. */
  get length(): number {
    const first = this.spans[0]
    return first !== undefined && first[0] === 0 ? first[1] : 0
  }

  /** Record that `[start, end)` is written. */
  add(start: number, end: number): void {
    if (end <= start) return
    const spans = this.spans
    let i = 0
    while (i < spans.length && spans[i]![1] < start) i++
    let from = start
    let to = end
    let j = i
    while (j < spans.length && spans[j]![0] <= to) {
      from = Math.min(from, spans[j]![0])
      to = Math.max(to, spans[j]![1])
      j++
    }
    spans.splice(i, j - i, [from, to])
  }
}
