import { IsoagentError } from '../../../errors.ts'
import type { ScanResult } from '../../../workspace/file-scanner.ts'
import type { WorkspacePath } from '../../../workspace/workspace-path.ts'
import type { ByteIndex } from '../../../workspace/workspace-services.ts'
import {
  countLineEnds,
  countLinesWith,
  hasFoldingSigns,
  indexOfByte,
} from '../bytes/byte-search.ts'
import { chunkReader } from '../bytes/chunk-reader.ts'
import { CHUNK_BYTES, FIRST_READ_BYTES, MAX_LINE_CHARS } from '../tuning.ts'
import type { BytePrefilter, LineMatcher } from './line-matcher.ts'
import type { FileReader, ScanRequest } from './scan-request.ts'

// Scans over raw bytes: a file is decoded only where the prefilter's literals are, and the
// results equal those of the decoding scan in scan-file.ts (test/unit/scan-equivalence.test.ts).

/** Decodes files that arrive in one read, in one non-streaming call (several times faster). */
export const WHOLE = new TextDecoder('utf-8')
/** Decodes later blocks of a file, where a U+FEFF is text, not a byte order mark. */
const LATER = new TextDecoder('utf-8', { ignoreBOM: true })

/** Whether one line (no line end) matches, judged as a scan over a block judges it. */
function lineMatches(matcher: LineMatcher, line: string): boolean {
  let hit = false
  matcher.matchingLineStarts(line, () => {
    hit = true
    return false
  })
  return hit
}

/**
 * Count the matching lines of `block` (whole lines; `first` when it starts the file) into
 * `result`, for counting modes with a byte prefilter: a block without the literal has no match
 * and is never decoded, and a pure-literal pattern is counted in the bytes; blocks that hold the
 * literal (or a case-folding sign) are decoded where needed and matched. Returns false once
 * `result` holds all the matches wanted (files_with_matches: one).
 */
export function countBlock(
  block: Uint8Array,
  first: boolean,
  request: ScanRequest,
  pre: BytePrefilter,
  result: ScanResult,
): boolean {
  const max = request.firstOnly ? 1 : Number.POSITIVE_INFINITY
  const index = request.matcher.byteIndex
  const signs = pre.foldsNonAscii && hasFoldingSigns(block)
  if (!signs && pre.exact) {
    result.matches += countLinesWith(pre.find, block, max - result.matches, index)
  } else if (!signs && pre.lineLocal) {
    // Decode only the lines that hold the literal.
    for (let at = pre.find(block, 0); at !== -1 && result.matches < max;) {
      const start = at === 0 ? 0 : block.lastIndexOf(0x0a, at) + 1
      let end = indexOfByte(block, 0x0a, at, index)
      if (end === -1) end = block.length
      const bytes = block.subarray(start, end)
      if (pre.others.every((f) => f(bytes, 0) !== -1)) {
        const line = (first && start === 0 ? WHOLE : LATER).decode(bytes)
        if (lineMatches(request.matcher, line)) result.matches++
      }
      at = end >= block.length ? -1 : pre.find(block, end + 1)
    }
  } else if (signs || pre.find(block, 0) !== -1) {
    const text = (first ? WHOLE : LATER).decode(block)
    request.matcher.matchingLineStarts(text, () => {
      result.matches++
      return result.matches < max
    })
  }
  return result.matches < max
}

/**
 * Counting modes with a byte prefilter over a file larger than its first read: the file is cut
 * into blocks of whole lines, each counted by {@link countBlock}.
 */
export async function countWithPrefilter(
  ws: FileReader,
  path: WorkspacePath,
  head: Uint8Array,
  request: ScanRequest,
  pre: BytePrefilter,
  result: ScanResult,
  signal: AbortSignal | undefined,
): Promise<ScanResult> {
  let first = true
  const count = (block: Uint8Array) => {
    const more = countBlock(block, first, request, pre, result)
    first = false
    return more
  }
  const reader = chunkReader(await ws.readStream(path, { offset: FIRST_READ_BYTES }), CHUNK_BYTES)
  try {
    // Whole lines are counted where they lie; only a line split between chunks is copied (a
    // chunk's bytes are overwritten by the next).
    let carry: Uint8Array = new Uint8Array(0)
    let next: Uint8Array | undefined = head
    for (;;) {
      let value = next
      next = undefined
      if (value === undefined) {
        if (signal?.aborted) throw new IsoagentError('cancelled', 'search cancelled')
        value = await reader.read()
        if (value === undefined) {
          if (carry.length > 0) count(carry)
          return result
        }
      }
      if (value.length === 0) continue
      const firstEnd = value.indexOf(0x0a)
      if (firstEnd === -1) {
        carry = carry.length > 0 ? joined(carry, value) : value.slice()
        // As the decoding scan does: a line past MAX_LINE_CHARS (UTF-16 units) skips the file.
        if (carry.length > MAX_LINE_CHARS && LATER.decode(carry).length > MAX_LINE_CHARS) {
          result.lineTooLong = true
          result.matches = 0
          return result
        }
        continue
      }
      const lastEnd = value.lastIndexOf(0x0a)
      if (carry.length > 0) {
        if (!count(joined(carry, value.subarray(0, firstEnd + 1)))) return result
        if (lastEnd > firstEnd && !count(value.subarray(firstEnd + 1, lastEnd + 1))) return result
      } else if (!count(value.subarray(0, lastEnd + 1))) return result
      carry = value.slice(lastEnd + 1)
    }
  } finally {
    await reader.close()
  }
}

/**
 * Whether a file larger than its first read holds the prefilter's literal (or a case-folding
 * sign) anywhere: one pass over the raw bytes, so a large file without it is never decoded.
 */
export async function containsLiteral(
  ws: FileReader,
  path: WorkspacePath,
  head: Uint8Array,
  pre: BytePrefilter,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const found = (bytes: Uint8Array) =>
    pre.find(bytes, 0) !== -1 || (pre.foldsNonAscii && hasFoldingSigns(bytes))
  if (found(head)) return true
  // Keep the last bytes of each chunk, so a literal across a chunk boundary is seen.
  const keep = pre.needle.bytes.length + 2
  let tail = head.subarray(Math.max(0, head.length - keep))
  const reader = chunkReader(await ws.readStream(path, { offset: head.length }), CHUNK_BYTES)
  try {
    for (;;) {
      if (signal?.aborted) throw new IsoagentError('cancelled', 'search cancelled')
      const value = await reader.read()
      if (value === undefined) return false
      // A literal across the boundary lies within the kept tail and the chunk's first bytes.
      if (found(joined(tail, value.subarray(0, keep))) || found(value)) return true
      tail = joined(tail, value.subarray(-keep)).slice(-keep)
    }
  } finally {
    await reader.close()
  }
}

function joined(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}

/** Whether `line` holds every one of the prefilter's other literals. */
function holdsOthers(pre: BytePrefilter, line: Uint8Array): boolean {
  for (const find of pre.others) if (find(line, 0) === -1) return false
  return true
}

/** Strip a trailing CR for display (CRLF files). */
const noCr = (text: string) => (text.endsWith('\r') ? text.slice(0, -1) : text)

/** The state of {@link contentInBytes} over one file. */
class ContentScan {
  readonly size: number
  /** The last line ends at the final line end, or at the end of a file without one. */
  readonly lastLineEnd: number
  /** After-context owed: lines up to this number, starting after the last printed one. */
  owedThrough = 0
  owedLine = 0
  owedStart = 0

  constructor(
    readonly bytes: Uint8Array,
    readonly result: ScanResult,
    readonly index: ByteIndex,
  ) {
    this.size = bytes.length
    this.lastLineEnd = this.size > 0 && bytes[this.size - 1] === 0x0a ? this.size - 1 : this.size
  }

  /** Where the line starting at `start` ends (its line end, or the end of the file). */
  endOf(start: number): number {
    const end = indexOfByte(this.bytes, 0x0a, start, this.index)
    return end === -1 ? this.size : end
  }

  decode(start: number, end: number): string {
    return (start === 0 ? WHOLE : LATER).decode(this.bytes.subarray(start, end))
  }

  emit(line: number, start: number, end: number, match: boolean, text?: string) {
    const { result } = this
    if (line <= result.shownThrough) return
    result.records.push({ line, text: noCr(text ?? this.decode(start, end)), match })
    result.shownThrough = line
  }

  /** Print the after-context owed, up to the line before `beforeLine`. */
  flushAfter(beforeLine: number) {
    let line = this.owedLine
    let start = this.owedStart
    while (
      line < beforeLine &&
      line <= this.owedThrough &&
      start <= this.lastLineEnd &&
      start < this.size
    ) {
      const end = this.endOf(start)
      this.emit(line, start, end, false)
      line++
      start = end + 1
    }
    this.owedLine = line
    this.owedStart = start
  }
}

/**
 * Content mode over a whole file's bytes with a line-local prefilter: only lines holding the
 * required literals are decoded and matched; line numbers come from counting line ends in the
 * bytes, and only printed lines (matches and their context) are decoded. Gives exactly the
 * records of the decoding scan.
 */
export function contentInBytes(
  bytes: Uint8Array,
  request: ScanRequest,
  pre: BytePrefilter,
  result: ScanResult,
): void {
  const ctx = request.context
  const scan = new ContentScan(bytes, result, request.matcher.byteIndex)
  const size = bytes.length
  // Line number of the line starting at `counted`.
  let counted = 0
  let line = 1
  let kept = 0
  for (let at = pre.find(bytes, 0); at !== -1;) {
    const start = at === 0 ? 0 : bytes.lastIndexOf(0x0a, at) + 1
    const end = scan.endOf(at)
    line += countLineEnds(bytes, counted, start)
    counted = start
    const next = end >= size ? -1 : end + 1
    if (
      line <= request.afterLine ||
      (pre.others.length > 0 && !holdsOthers(pre, bytes.subarray(start, end)))
    ) {
      at = next === -1 ? -1 : pre.find(bytes, next)
      continue
    }
    // A pure literal found in the bytes is a match (see ByteNeedle); anything else is decoded
    // and matched.
    const text = pre.exact ? undefined : scan.decode(start, end)
    if (text !== undefined && !lineMatches(request.matcher, text)) {
      at = next === -1 ? -1 : pre.find(bytes, next)
      continue
    }
    if (kept >= request.maxMatches) {
      scan.flushAfter(line)
      result.more = true
      return
    }
    scan.flushAfter(line)
    result.matches++
    if (request.firstOnly) return
    // Before-context: up to ctx lines above, found by stepping back over line ends.
    let from = start
    let first = line
    for (let k = 0; k < ctx && from > 0; k++) {
      from = from - 1 === 0 ? 0 : bytes.lastIndexOf(0x0a, from - 2) + 1
      first--
    }
    for (let l = first, s = from; l < line; l++) {
      const e = scan.endOf(s)
      scan.emit(l, s, e, false)
      s = e + 1
    }
    scan.emit(line, start, end, true, text)
    kept++
    result.lastMatchLine = line
    scan.owedThrough = line + ctx
    scan.owedLine = line + 1
    scan.owedStart = end + 1
    at = next === -1 ? -1 : pre.find(bytes, next)
  }
  scan.flushAfter(Number.POSITIVE_INFINITY)
}
