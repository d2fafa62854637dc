import { IsoagentError } from '../../errors.ts'
import { hasFoldingSigns } from '../../text/byte-search.ts'
import {
  containsLiteral,
  contentInBytes,
  countWithPrefilter,
  FIRST_READ_BYTES,
  MAX_LINE_CHARS,
  WHOLE,
} from './scan-bytes.ts'
import { BINARY_SNIFF_BYTES } from '../../text/bytes.ts'
import type { WorkspacePath } from '../../workspace/workspace-path.ts'
import type { WorkspaceServices } from '../../workspace/workspace-services.ts'

/** The part of a workspace a scan reads through. */
export type FileReader = Pick<WorkspaceServices, 'read' | 'readStream'>
import type { ScanResult } from '../../workspace/file-scanner.ts'
import type { LineMatcher } from './line-matcher.ts'

export { MAX_LINE_CHARS } from './scan-bytes.ts'
export type { ScanRecord, ScanResult } from '../../workspace/file-scanner.ts'

/** Text handed to the matcher at once; files are streamed in blocks of about this size. */
const BLOCK_CHARS = 1 << 20
/** Content mode reads a file with a line-local prefilter whole up to this size (12 MiB). */
const CONTENT_BYTES_MAX = 12 * 1024 * 1024

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
  ws: FileReader,
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
  // The first read holds the first 8 KiB (or the whole file), where a NUL marks it binary.
  if (head.subarray(0, BINARY_SNIFF_BYTES).indexOf(0) !== -1) {
    result.binary = true
    return result
  }
  const pre = request.matcher.prefilter
  if (pre !== undefined && !request.keepText)
    return countWithPrefilter(ws, path, head, request, pre, result, signal)
  if (pre !== undefined && pre.lineLocal) {
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
