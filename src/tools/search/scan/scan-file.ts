import { IsoagentError } from '../../../errors.ts'
import { BINARY_SNIFF_BYTES, concatBytes } from '../../../text/bytes.ts'
import type { ScanResult } from '../../../workspace/file-scanner.ts'
import type { WorkspacePath } from '../../../workspace/workspace-path.ts'
import { hasFoldingSigns, indexOfByte } from '../bytes/byte-search.ts'
import { chunkReader, type ChunkReader } from '../bytes/chunk-reader.ts'
import { searchBuffers } from '../bytes/simd-bytes.ts'
import {
  BLOCK_CHARS,
  CHUNK_BYTES,
  CONTENT_BYTES_MAX,
  FIRST_READ_BYTES,
  MAX_LINE_CHARS,
} from '../tuning.ts'
import type { BytePrefilter } from './line-matcher.ts'
import {
  containsLiteral,
  contentInBytes,
  countBlock,
  countWithPrefilter,
  WHOLE,
} from './scan-bytes.ts'
import type { FileReader, ScanRequest } from './scan-request.ts'

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

function emptyResult(request: ScanRequest): ScanResult {
  return {
    binary: false,
    matches: 0,
    records: [],
    lastMatchLine: 0,
    shownThrough: request.shownThrough,
    more: false,
  }
}

/** Whether a file's first bytes mark it binary: a NUL in its first 8 KiB. */
const isBinary = (head: Uint8Array, request: ScanRequest) =>
  indexOfByte(head.subarray(0, BINARY_SNIFF_BYTES), 0, 0, request.matcher.byteIndex) !== -1

/**
 * Matching lines of a text in blocks of whole lines, with their line numbers and context: the
 * decoding scan. A block carries the last `context` lines of the one before for before-context.
 */
class LineBlocks {
  /** Complete lines carried from the previous block for before-context. */
  private prefix: string[] = []
  /** After-context lines still owed after the last match. */
  private owedAfter = 0
  private kept = 0
  private readonly ctx: number

  constructor(
    private readonly request: ScanRequest,
    private readonly result: ScanResult,
  ) {
    this.ctx = request.keepText ? request.context : 0
  }

  private emit(line: number, text: string, match: boolean) {
    if (line <= this.result.shownThrough) return
    this.result.records.push({ line, text: display(text), match })
    this.result.shownThrough = line
  }

  /** Process `block` (complete lines, the first numbered `first`); returns false to stop. */
  process(block: string, first: number): boolean {
    const { request, result, ctx } = this
    const before = this.prefix.length
    const text = before > 0 ? this.prefix.join('\n') + '\n' + block : block
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
      while (this.owedAfter > 0 && lastIndex + 1 < upTo) {
        lastIndex++
        this.emit(baseLine + lastIndex, lineText(lastIndex), false)
        this.owedAfter--
      }
    }
    let stop = false
    request.matcher.matchingLineStarts(text, (lineStart) => {
      if (lineStart < newFrom) return true
      const index = indexOf(lineStart)
      const line = baseLine + index
      if (line <= request.afterLine) return true
      if (request.keepText && this.kept >= request.maxMatches) {
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
        this.owedAfter = 0
        for (let i = Math.max(0, index - ctx); i < index; i++)
          this.emit(baseLine + i, lineText(i), false)
        this.emit(line, lineText(index), true)
        this.kept++
        result.lastMatchLine = line
        this.owedAfter = ctx
        lastIndex = index
      }
      return true
    })
    if (stop) return false
    if (request.keepText) {
      if (this.owedAfter > 0 && lastIndex < before - 1) lastIndex = before - 1
      flushAfter(starts.length)
    }
    const all = starts.length
    this.prefix =
      ctx > 0
        ? Array.from({ length: Math.min(ctx, all) }, (_, k) =>
            lineText(all - Math.min(ctx, all) + k),
          )
        : []
    return true
  }
}

/** Count the matching lines of `text` (whole lines) into `result`; false once it has enough. */
function countLines(text: string, request: ScanRequest, result: ScanResult): boolean {
  let stop = false
  request.matcher.matchingLineStarts(text, () => {
    result.matches++
    stop = request.firstOnly
    return !stop
  })
  return !stop
}

/** Lines in `block`: its line ends, and one more for a last line without one. */
function lineCount(block: string): number {
  let lines = 0
  for (let at = block.indexOf('\n'); at !== -1; at = block.indexOf('\n', at + 1)) lines++
  return block.endsWith('\n') ? lines : lines + 1
}

/** Scan a whole file held in `bytes`: no waiting, no copies. */
function scanWhole(bytes: Uint8Array, request: ScanRequest): ScanResult {
  const result = emptyResult(request)
  if (isBinary(bytes, request)) {
    result.binary = true
    return result
  }
  const pre = request.matcher.prefilter
  const signs = pre !== undefined && pre.foldsNonAscii && hasFoldingSigns(bytes)
  if (pre !== undefined && !request.keepText) {
    countBlock(bytes, true, request, pre, result)
    return result
  }
  if (pre !== undefined && pre.lineLocal && !signs) {
    contentInBytes(bytes, request, pre, result)
    return result
  }
  // The required literal is not in the bytes: nothing to decode.
  if (pre !== undefined && !signs && pre.find(bytes, 0) === -1) return result
  const text = WHOLE.decode(bytes)
  if (text.length === 0) return result
  if (request.keepText) new LineBlocks(request, result).process(text, 1)
  else countLines(text, request, result)
  return result
}

/**
 * A file over its first read, held whole in `bytes`, scanned at once; undefined when it is to be
 * streamed instead: over CONTENT_BYTES_MAX, or holding case-folding signs (it would be decoded
 * whole). Only with a line-local prefilter, which decides in the bytes.
 */
function scanWholeLarge(bytes: Uint8Array, request: ScanRequest, pre: BytePrefilter) {
  if (bytes.length > CONTENT_BYTES_MAX || (pre.foldsNonAscii && hasFoldingSigns(bytes)))
    return undefined
  return scanWhole(bytes, request)
}

/**
 * Scan one file without waiting, when the workspace serves its first read at once
 * (`readNow`): its result when the file fits in that read, or is scanned whole from one read
 * at once; else the first read's bytes (hand them to {@link scanFile}); undefined when the
 * workspace cannot read at once.
 */
function scanFileNow(
  ws: FileReader,
  path: WorkspacePath,
  request: ScanRequest,
): ScanResult | Uint8Array | undefined {
  if (ws.readNow === undefined) return undefined
  const own = (buffers ??= { scratch: new Uint8Array(FIRST_READ_BYTES) })
  const { scratch } = own
  const head = ws.readNow(path, { offset: 0, length: FIRST_READ_BYTES }, scratch)
  if (head === undefined) return undefined
  // The workspace reads into the buffer given: from now on, into the kernels' memory.
  if (own.moved === undefined && head.buffer === scratch.buffer) moveToKernelMemory(own)
  if (head.length < FIRST_READ_BYTES) return scanWhole(head, request)
  const pre = request.matcher.prefilter
  // With a line-local prefilter, a file up to CONTENT_BYTES_MAX is scanned whole in its bytes,
  // read at once where the workspace can: as it holds it (memory), else into a buffer kept for
  // it (local disk), which a larger file does not fit, so it is not read.
  if (pre?.lineLocal === true && !isBinary(head, request)) {
    if (request.firstOnly) {
      // files_with_matches: the whole lines of the first read decide most files.
      const result = emptyResult(request)
      const lastEnd = head.lastIndexOf(0x0a)
      if (lastEnd !== -1) countBlock(head.subarray(0, lastEnd + 1), true, request, pre, result)
      if (result.matches > 0) return result
    }
    const range = { offset: 0, length: CONTENT_BYTES_MAX + 1 }
    // Into the kernels' memory where they run, else as the workspace holds it; then the other.
    const into = () =>
      ws.readNow!(path, range, (own.wholeScratch ??= new Uint8Array(CONTENT_BYTES_MAX)))
    const kernel = own.moved === true
    let whole = kernel ? into() : ws.readNow(path, range)
    if (whole === undefined) whole = kernel ? ws.readNow(path, range) : into()
    const scanned = whole === undefined ? undefined : scanWholeLarge(whole, request, pre)
    if (scanned !== undefined) return scanned
  }
  // The caller scans the rest later, when `scratch` holds another file (and does not try the
  // whole read again).
  return head.buffer === scratch.buffer ? head.slice() : head
}

/**
 * Scan one file: at once when the workspace reads it at once and it fits in that read
 * ({@link scanFileNow}), else once read ({@link scanFile}). Throws, or rejects, with the scan's
 * error.
 */
export function scanFileSoon(
  ws: FileReader,
  path: WorkspacePath,
  request: ScanRequest,
  signal?: AbortSignal,
): ScanResult | Promise<ScanResult> {
  const now = scanFileNow(ws, path, request)
  if (now !== undefined && !(now instanceof Uint8Array)) return now
  return scanFile(ws, path, request, signal, now)
}

/**
 * Where {@link scanFileNow} reads: `scratch` a file's first read, `wholeScratch` a larger file
 * whole (made when first needed). A scan of a whole file keeps nothing of their bytes. Once a
 * workspace is seen to read into the buffer it is given, both move into the SIMD kernels'
 * memory where those run (`moved`: whether they did), and the kernels search them in place.
 */
interface ReadBuffers {
  scratch: Uint8Array
  wholeScratch?: Uint8Array
  moved?: boolean
}
let buffers: ReadBuffers | undefined
function moveToKernelMemory(own: ReadBuffers) {
  const inKernel = searchBuffers([FIRST_READ_BYTES, CONTENT_BYTES_MAX])
  own.moved = inKernel !== undefined
  if (inKernel === undefined) return
  own.scratch = inKernel[0]!
  own.wholeScratch = inKernel[1]!
}

/**
 * Scan one file for matching lines, streaming it block by block so no file becomes one huge
 * string. A NUL byte in the first 8 KiB marks it binary and it is skipped. `head` is the file's
 * first read, when {@link scanFileNow} has made it already: it has then also tried to read the
 * file whole, which is not tried again.
 */
export async function scanFile(
  ws: FileReader,
  path: WorkspacePath,
  request: ScanRequest,
  signal?: AbortSignal,
  head?: Uint8Array,
): Promise<ScanResult> {
  const triedWhole = head !== undefined
  // Small files (most of a tree) take one read; larger ones stream the rest in chunks.
  head ??= await ws.read(path, { offset: 0, length: FIRST_READ_BYTES })
  if (head.length < FIRST_READ_BYTES) return scanWhole(head, request)
  const result = emptyResult(request)
  // The first read holds the first 8 KiB, where a NUL marks it binary.
  if (isBinary(head, request)) {
    result.binary = true
    return result
  }
  const pre = request.matcher.prefilter
  if (pre !== undefined && !request.keepText)
    return countWithPrefilter(ws, path, head, request, pre, result, signal)
  if (pre?.lineLocal === true && !triedWhole) {
    const rest = await ws.read(path, {
      offset: FIRST_READ_BYTES,
      length: CONTENT_BYTES_MAX - FIRST_READ_BYTES + 1,
    })
    const scanned =
      rest.length > CONTENT_BYTES_MAX - FIRST_READ_BYTES
        ? undefined
        : scanWholeLarge(concatBytes([head, rest]), request, pre)
    if (scanned !== undefined) return scanned
  }
  if (pre !== undefined && !(await containsLiteral(ws, path, head, pre, signal))) return result
  let reader: ChunkReader | undefined
  let first: Uint8Array | undefined = head
  /** The head, then the rest of the file chunk by chunk; undefined at the end. */
  const nextChunk = async (): Promise<Uint8Array | undefined> => {
    if (first !== undefined) {
      const chunk = first
      first = undefined
      return chunk
    }
    reader ??= chunkReader(await ws.readStream(path, { offset: FIRST_READ_BYTES }), CHUNK_BYTES)
    return reader.read()
  }
  const decoder = new TextDecoder('utf-8')
  const blocks = new LineBlocks(request, result)
  let pending = ''
  /** Line number of the first line of the next block's new text. */
  let nextLine = 1
  let done = false
  try {
    while (!done) {
      if (signal?.aborted) throw new IsoagentError('cancelled', 'search cancelled')
      const value = await nextChunk()
      if (value !== undefined) pending += decoder.decode(value, { stream: true })
      else {
        pending += decoder.decode()
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
          if (!countLines(block, request, result)) return result
          continue
        }
        if (!blocks.process(block, nextLine)) return result
        nextLine += lineCount(block)
      }
    }
    return result
  } finally {
    await reader?.close()
  }
}
