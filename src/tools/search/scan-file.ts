import { IsoagentError } from '../../errors.ts'
import { countLinesWith, hasFoldingSigns } from '../../text/byte-search.ts'
import type { BytePrefilter } from './line-matcher.ts'
import { BINARY_SNIFF_BYTES } from '../../text/bytes.ts'
import type { WorkspacePath } from '../../workspace/workspace-path.ts'
import type { WorkspaceServices } from '../../workspace/workspace-services.ts'
import type { LineMatcher } from './line-matcher.ts'

/** Text handed to the matcher at once; files are streamed in blocks of about this size. */
const BLOCK_CHARS = 1 << 20
/** Bytes of the first read: files up to this size are read in one call. */
const FIRST_READ_BYTES = 1 << 20
/** Content mode reads a file with a line-local prefilter whole up to this size (12 MiB). */
const CONTENT_BYTES_MAX = 12 * 1024 * 1024
/** A line longer than this (64 Mi characters) is not searched: the file is skipped and counted. */
export const MAX_LINE_CHARS = 64 * 1024 * 1024

/** Decodes files that arrive in one read, in one non-streaming call (several times faster). */
const WHOLE = new TextDecoder('utf-8')
/** Decodes later blocks of a file, where a U+FEFF is text, not a byte order mark. */
const LATER = new TextDecoder('utf-8', { ignoreBOM: true })

/** One printed line of a content-mode result. */
export interface ScanRecord {
  /** 1-based line number. */
  line: number
  text: string
  match: boolean
}

/** What to look for in one file. */
export interface ScanRequest {
  matcher: LineMatcher
  /** `content` keeps matching (and context) lines; the others only count. */
  keepText: boolean
  /** Stop at the first match (files_with_matches). */
  firstOnly: boolean
  /** Context lines before and after each match (content mode). */
  context: number
  /** Resume: ignore matches on lines ≤ this. */
  afterLine: number
  /** Resume: never print lines ≤ this again. */
  shownThrough: number
  /** Content mode: keep at most this many matching lines; `more` says if another follows. */
  maxMatches: number
}

/** What one file gave. */
export interface ScanResult {
  binary: boolean
  /** Matching lines seen (all of them unless the scan stopped early). */
  matches: number
  records: ScanRecord[]
  /** Line of the last kept match (0 if none). */
  lastMatchLine: number
  /** Last line printed, match or context (for the next page's dedupe). */
  shownThrough: number
  /** Content mode: more matching lines follow the kept ones. */
  more: boolean
  /** The file has a line over {@link MAX_LINE_CHARS} and was skipped. */
  lineTooLong?: boolean
}

/**
 * Keep at most `capacity` matching lines of a content-mode result (with the lines printed up to
 * the next match); when lines are dropped, the result says `more` and where to resume.
 */
export function truncateMatches(
  result: ScanResult,
  capacity: number,
  shownBefore: number,
): ScanResult {
  let seen = 0
  let cut = -1
  for (let i = 0; i < result.records.length; i++) {
    if (!result.records[i]!.match) continue
    if (seen === capacity) {
      cut = i
      break
    }
    seen++
  }
  if (cut === -1) return result
  const records = result.records.slice(0, cut)
  let lastMatchLine = 0
  for (const r of records) if (r.match) lastMatchLine = r.line
  return {
    ...result,
    records,
    matches: seen,
    lastMatchLine,
    shownThrough: records.length > 0 ? records[records.length - 1]!.line : shownBefore,
    more: true,
  }
}

/** Strip a trailing CR for display (CRLF files). */
function display(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line
}

/**
 * Scan one file for matching lines, streaming it block by block so no file becomes one huge
 * string. A NUL byte in the first 8 KiB marks it binary and it is skipped.
 */
export async function scanFile(
  ws: WorkspaceServices,
  path: WorkspacePath,
  request: ScanRequest,
  signal?: AbortSignal,
): Promise<ScanResult> {
  const result: ScanResult = {
    binary: false,
    matches: 0,
    records: [],
    lastMatchLine: 0,
    shownThrough: request.shownThrough,
    more: false,
  }
  const ctx = request.keepText ? request.context : 0
  // Small files (most of a tree) take one read; larger ones stream the rest in chunks.
  const head = await ws.read(path, { offset: 0, length: FIRST_READ_BYTES })
  const pre = request.matcher.prefilter
  if (pre !== undefined && !request.keepText) {
    if (head.subarray(0, BINARY_SNIFF_BYTES).indexOf(0) !== -1) {
      result.binary = true
      return result
    }
    return countWithPrefilter(ws, path, head, request, pre, result, signal)
  }
  if (
    pre !== undefined &&
    pre.lineLocal &&
    head.subarray(0, BINARY_SNIFF_BYTES).indexOf(0) === -1
  ) {
    // Files up to CONTENT_BYTES_MAX are scanned whole in their bytes.
    let whole: Uint8Array | undefined = head
    if (head.length === FIRST_READ_BYTES) {
      const rest = await ws.read(path, {
        offset: FIRST_READ_BYTES,
        length: CONTENT_BYTES_MAX - FIRST_READ_BYTES + 1,
      })
      if (rest.length <= CONTENT_BYTES_MAX - FIRST_READ_BYTES) {
        whole = new Uint8Array(head.length + rest.length)
        whole.set(head)
        whole.set(rest, head.length)
      } else whole = undefined
    }
    if (whole !== undefined && !(pre.foldsNonAscii && hasFoldingSigns(whole))) {
      contentInBytes(whole, request, pre, result)
      return result
    }
  }
  if (
    pre !== undefined &&
    head.length === FIRST_READ_BYTES &&
    head.subarray(0, BINARY_SNIFF_BYTES).indexOf(0) === -1 &&
    !(await containsLiteral(ws, path, head, pre, signal))
  )
    return result
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined
  let headPending = true
  const nextChunk = async (): Promise<{ done: boolean; value?: Uint8Array }> => {
    if (headPending) {
      headPending = false
      return { done: head.length < FIRST_READ_BYTES, value: head }
    }
    reader ??= (await ws.readStream(path, { offset: FIRST_READ_BYTES })).getReader()
    return reader.read()
  }
  let decoder: TextDecoder | undefined
  let sniffed = 0
  let pending = ''
  /** Complete lines carried from the previous block for before-context. */
  let prefix: string[] = []
  /** Line number of the first line of the next block's new text. */
  let nextLine = 1
  /** After-context lines still owed after the last match. */
  let owedAfter = 0
  let done = false
  let kept = 0

  const emit = (line: number, text: string, match: boolean) => {
    if (line <= result.shownThrough) return
    result.records.push({ line, text: display(text), match })
    result.shownThrough = line
  }

  /** Process `lines` (complete lines, the first numbered `first`); returns false to stop. */
  const processBlock = (block: string, first: number): boolean => {
    const before = prefix.length
    const text = before > 0 ? prefix.join('\n') + '\n' + block : block
    // Line-start index of this text, built only when line numbers or context are needed.
    const starts: number[] = [0]
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1))
      starts.push(at + 1)
    if (starts.length > 0 && starts[starts.length - 1] === text.length) starts.pop()
    const baseLine = first - before
    const newFrom = before > 0 ? starts[before]! : 0
    const lineText = (i: number) => {
      const s = starts[i]!
      const e =
        i + 1 < starts.length
          ? starts[i + 1]! - 1
          : text.endsWith('\n')
            ? text.length - 1
            : text.length
      return text.slice(s, e)
    }
    let cursor = 0
    const indexOf = (offset: number) => {
      let lo = cursor
      let hi = starts.length - 1
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1
        if (starts[mid]! <= offset) lo = mid
        else hi = mid - 1
      }
      cursor = lo
      return lo
    }
    let lastIndex = before - 1
    const flushAfter = (upTo: number) => {
      while (owedAfter > 0 && lastIndex + 1 < upTo) {
        lastIndex++
        emit(baseLine + lastIndex, lineText(lastIndex), false)
        owedAfter--
      }
    }
    let stop = false
    request.matcher.matchingLineStarts(text, (lineStart) => {
      if (lineStart < newFrom) return true
      const index = indexOf(lineStart)
      const line = baseLine + index
      if (line <= request.afterLine) return true
      if (request.keepText && kept >= request.maxMatches) {
        flushAfter(index)
        result.more = true
        stop = true
        return false
      }
      result.matches++
      if (request.firstOnly) {
        stop = true
        return false
      }
      if (request.keepText) {
        flushAfter(index)
        owedAfter = 0
        for (let i = Math.max(0, index - ctx); i < index; i++)
          emit(baseLine + i, lineText(i), false)
        emit(line, lineText(index), true)
        kept++
        result.lastMatchLine = line
        owedAfter = ctx
        lastIndex = index
      }
      return true
    })
    if (stop) return false
    if (request.keepText) {
      if (owedAfter > 0 && lastIndex < before - 1) lastIndex = before - 1
      flushAfter(starts.length)
    }
    const all = starts.length
    prefix =
      ctx > 0
        ? Array.from({ length: Math.min(ctx, all) }, (_, k) =>
            lineText(all - Math.min(ctx, all) + k),
          )
        : []
    return true
  }

  try {
    while (!done) {
      if (signal?.aborted) throw new IsoagentError('cancelled', 'search cancelled')
      const { done: end, value } = await nextChunk()
      if (value !== undefined && value.length > 0) {
        if (sniffed < BINARY_SNIFF_BYTES) {
          if (value.subarray(0, BINARY_SNIFF_BYTES - sniffed).indexOf(0) !== -1) {
            result.binary = true
            return result
          }
          sniffed += Math.min(value.length, BINARY_SNIFF_BYTES - sniffed)
        }
        if (end && decoder === undefined) {
          // The whole file in one piece: look for the required literal in the bytes first.
          if (
            pre !== undefined &&
            !(pre.foldsNonAscii && hasFoldingSigns(value)) &&
            pre.find(value, 0) === -1
          )
            return result
          pending = WHOLE.decode(value)
        } else {
          decoder ??= new TextDecoder('utf-8')
          pending += decoder.decode(value, { stream: true })
        }
      }
      if (end) {
        if (decoder !== undefined) pending += decoder.decode()
        done = true
      }
      if (pending.length >= BLOCK_CHARS || (done && pending.length > 0)) {
        const cut = done ? pending.length : pending.lastIndexOf('\n') + 1
        if (cut === 0) {
          if (pending.length > MAX_LINE_CHARS) {
            result.lineTooLong = true
            return result
          }
          continue
        }
        const block = pending.slice(0, cut)
        pending = pending.slice(cut)
        if (!request.keepText) {
          // Counting modes need neither line numbers nor context: just the matching lines.
          let stop = false
          request.matcher.matchingLineStarts(block, () => {
            result.matches++
            stop = request.firstOnly
            return !stop
          })
          if (stop) return result
          continue
        }
        let lines = 0
        for (let at = block.indexOf('\n'); at !== -1; at = block.indexOf('\n', at + 1)) lines++
        if (!block.endsWith('\n')) lines++
        if (!processBlock(block, nextLine)) return result
        nextLine += lines
      }
    }
    return result
  } finally {
    await reader?.cancel().catch(() => {})
  }
}

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
 * Counting modes with a byte prefilter: the file is cut into blocks of whole lines; a block
 * without the literal has no match and is never decoded, and a pure-literal pattern is counted
 * in the bytes. Blocks that hold the literal (or a case-folding sign) are decoded and matched.
 */
async function countWithPrefilter(
  ws: WorkspaceServices,
  path: WorkspacePath,
  head: Uint8Array,
  request: ScanRequest,
  pre: BytePrefilter,
  result: ScanResult,
  signal: AbortSignal | undefined,
): Promise<ScanResult> {
  const max = request.firstOnly ? 1 : Number.POSITIVE_INFINITY
  let first = true
  const count = (block: Uint8Array) => {
    const signs = pre.foldsNonAscii && hasFoldingSigns(block)
    if (!signs && pre.exact) {
      result.matches += countLinesWith(pre.find, block, max - result.matches)
    } else if (!signs && pre.lineLocal) {
      // Decode only the lines that hold the literal.
      for (let at = pre.find(block, 0); at !== -1 && result.matches < max;) {
        const start = at === 0 ? 0 : block.lastIndexOf(0x0a, at) + 1
        let end = block.indexOf(0x0a, at)
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
    first = false
    return result.matches < max
  }
  if (head.length < FIRST_READ_BYTES) {
    count(head)
    return result
  }
  const reader = (await ws.readStream(path, { offset: FIRST_READ_BYTES })).getReader()
  try {
    // Whole lines are counted where they lie; only a line split between chunks is copied.
    let carry: Uint8Array = new Uint8Array(0)
    let next: Uint8Array | undefined = head
    for (;;) {
      let value = next
      next = undefined
      if (value === undefined) {
        if (signal?.aborted) throw new IsoagentError('cancelled', 'search cancelled')
        const chunk = await reader.read()
        if (chunk.done) {
          if (carry.length > 0) count(carry)
          return result
        }
        value = chunk.value
      }
      if (value.length === 0) continue
      const firstEnd = value.indexOf(0x0a)
      if (firstEnd === -1) {
        carry = joined(carry, value)
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
      carry = value.subarray(lastEnd + 1)
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
}

/**
 * Whether a file larger than its first read holds the prefilter's literal (or a case-folding
 * sign) anywhere: one pass over the raw bytes, so a large file without it is never decoded.
 */
async function containsLiteral(
  ws: WorkspaceServices,
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
  const reader = (await ws.readStream(path, { offset: head.length })).getReader()
  try {
    for (;;) {
      if (signal?.aborted) throw new IsoagentError('cancelled', 'search cancelled')
      const { done, value } = await reader.read()
      if (done) return false
      if (value === undefined || value.length === 0) continue
      const joined = new Uint8Array(tail.length + value.length)
      joined.set(tail)
      joined.set(value, tail.length)
      if (found(joined)) return true
      tail = joined.subarray(Math.max(0, joined.length - keep))
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
}

function joined(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}

/**
 * Content mode over a whole file's bytes with a line-local prefilter: only lines holding the
 * required literals are decoded and matched; line numbers come from counting line ends in the
 * bytes, and only printed lines (matches and their context) are decoded. Gives exactly the
 * records of the decoding scan.
 */
function contentInBytes(
  bytes: Uint8Array,
  request: ScanRequest,
  pre: BytePrefilter,
  result: ScanResult,
): void {
  const ctx = request.context
  const size = bytes.length
  // The last line ends at the final line end, or at the end of a file without one.
  const lastLineEnd = size > 0 && bytes[size - 1] === 0x0a ? size - 1 : size
  const decode = (start: number, end: number) => {
    const text = (start === 0 ? WHOLE : LATER).decode(bytes.subarray(start, end))
    return text.endsWith('\r') ? text.slice(0, -1) : text
  }
  const endOf = (start: number) => {
    const end = bytes.indexOf(0x0a, start)
    return end === -1 ? size : end
  }
  const emit = (line: number, start: number, end: number, match: boolean) => {
    if (line <= result.shownThrough) return
    result.records.push({ line, text: decode(start, end), match })
    result.shownThrough = line
  }
  /** After-context owed: lines up to this number, starting after the last printed one. */
  let owedThrough = 0
  let owedFrom = { line: 0, start: 0 }
  const flushAfter = (beforeLine: number) => {
    let { line, start } = owedFrom
    while (line < beforeLine && line <= owedThrough && start <= lastLineEnd && start < size) {
      const end = endOf(start)
      emit(line, start, end, false)
      line++
      start = end + 1
    }
    owedFrom = { line, start }
  }
  // Line number of the line starting at `counted`.
  let counted = 0
  let line = 1
  let kept = 0
  for (let at = pre.find(bytes, 0); at !== -1;) {
    const start = at === 0 ? 0 : bytes.lastIndexOf(0x0a, at) + 1
    const end = endOf(at)
    for (
      let nl = bytes.indexOf(0x0a, counted);
      nl !== -1 && nl < start;
      nl = bytes.indexOf(0x0a, nl + 1)
    )
      line++
    counted = start
    const next = () => (end >= size ? -1 : pre.find(bytes, end + 1))
    if (line <= request.afterLine) {
      at = next()
      continue
    }
    const lineBytes = bytes.subarray(start, end)
    if (!pre.others.every((f) => f(lineBytes, 0) !== -1)) {
      at = next()
      continue
    }
    const text = (start === 0 ? WHOLE : LATER).decode(lineBytes)
    if (!lineMatches(request.matcher, text)) {
      at = next()
      continue
    }
    if (kept >= request.maxMatches) {
      flushAfter(line)
      result.more = true
      return
    }
    flushAfter(line)
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
      const e = endOf(s)
      emit(l, s, e, false)
      s = e + 1
    }
    emit(line, start, end, true)
    kept++
    result.lastMatchLine = line
    owedThrough = line + ctx
    owedFrom = { line: line + 1, start: end + 1 }
    at = next()
  }
  flushAfter(Number.POSITIVE_INFINITY)
}
