import { sha256 } from '@noble/hashes/sha2.js'
import { sha256Hex } from '../text/bytes.ts'

/** Chunk shape: at most 80 lines and 64 KiB each, at most 128 per file. */
export const CHUNK_LIMITS = { lines: 80, bytes: 64 * 1024, perFile: 128 } as const

const ID_DOMAIN = new TextEncoder().encode('a3s.workspace.chunk.v1\0')
const encoder = new TextEncoder()
const decoder = new TextDecoder('utf-8')

/** One chunk of a file: a run of whole lines (a line over 64 KiB is cut at the byte cap). */
export interface FileChunk {
  /** `sha256:` of `a3s.workspace.chunk.v1\0<path>\0<content_digest>\0<start u64 LE><end u64 LE>`. */
  id: string
  /** Byte range `[startByte, endByte)` in the file. */
  startByte: number
  endByte: number
  /** 1-based inclusive line range. */
  startLine: number
  endLine: number
  text: string
}

/** A file cut into chunks, with the digest the chunk ids carry. */
export interface ChunkedFile {
  /** `sha256:<hex>` of the whole file. */
  digest: string
  chunks: FileChunk[]
  /** More than 128 chunks: only the first 128 are kept. */
  truncated: boolean
}

function u64le(value: number): Uint8Array {
  const out = new Uint8Array(8)
  new DataView(out.buffer).setBigUint64(0, BigInt(value), true)
  return out
}

/** The chunk id of `[start, end)` of `path` whose content digest is `digest`. */
export function chunkId(path: string, digest: string, start: number, end: number): string {
  const parts = [ID_DOMAIN, encoder.encode(`${path}\0${digest}\0`), u64le(start), u64le(end)]
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    all.set(p, at)
    at += p.length
  }
  let hex = ''
  for (const byte of sha256(all)) hex += byte.toString(16).padStart(2, '0')
  return `sha256:${hex}`
}

/** `sha256:<hex>` of `bytes`. */
export async function contentDigest(bytes: Uint8Array): Promise<string> {
  return `sha256:${await sha256Hex(bytes)}`
}

/** Byte offsets just past each `\n` (and the end, when the file does not end with one). */
function lineEnds(bytes: Uint8Array): number[] {
  const ends: number[] = []
  let at = bytes.indexOf(10)
  while (at !== -1) {
    ends.push(at + 1)
    at = bytes.indexOf(10, at + 1)
  }
  if (ends.length === 0 || ends[ends.length - 1] !== bytes.length) ends.push(bytes.length)
  return ends
}

/** Cut `bytes` into spans of ≤ 80 lines and ≤ 64 KiB, line-aligned where a line fits. */
function spans(
  bytes: Uint8Array,
): { start: number; end: number; startLine: number; endLine: number }[] {
  const ends = lineEnds(bytes)
  const out: { start: number; end: number; startLine: number; endLine: number }[] = []
  let start = 0
  let line = 0
  while (start < bytes.length && line < ends.length) {
    let last = line
    while (
      last + 1 < ends.length &&
      last + 1 - line < CHUNK_LIMITS.lines &&
      ends[last + 1]! - start <= CHUNK_LIMITS.bytes
    )
      last++
    let end = Math.min(ends[last]!, start + CHUNK_LIMITS.bytes)
    while (end > start && end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end-- // keep UTF-8 whole
    if (end <= start) end = Math.min(ends[last]!, start + CHUNK_LIMITS.bytes)
    out.push({ start, end, startLine: line + 1, endLine: last + 1 })
    start = end
    if (end === ends[last]) line = last + 1
  }
  return out
}

/** Cut a text file into chunks with their ids (at most 128). */
export async function chunkFile(path: string, bytes: Uint8Array): Promise<ChunkedFile> {
  const digest = await contentDigest(bytes)
  const all = spans(bytes)
  const chunks = all.slice(0, CHUNK_LIMITS.perFile).map((s) => ({
    id: chunkId(path, digest, s.start, s.end),
    startByte: s.start,
    endByte: s.end,
    startLine: s.startLine,
    endLine: s.endLine,
    text: decoder.decode(bytes.subarray(s.start, s.end)),
  }))
  return { digest, chunks, truncated: all.length > CHUNK_LIMITS.perFile }
}
