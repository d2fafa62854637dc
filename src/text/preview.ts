import { utf8 } from './bytes.ts'

const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true })

/** Largest prefix of `bytes` no longer than `max` that does not split a UTF-8 sequence. */
export function utf8SafeHeadLength(bytes: Uint8Array, max: number): number {
  if (bytes.length <= max) return bytes.length
  let end = max
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  return end
}

/** Smallest suffix start at or after `from` that does not split a UTF-8 sequence. */
export function utf8SafeTailStart(bytes: Uint8Array, from: number): number {
  let start = Math.max(0, from)
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++
  return start
}

/** A bounded, UTF-8-safe prefix of `text` with whether anything was cut. */
export function boundedPreview(
  text: string,
  maxBytes: number,
): { text: string; truncated: boolean } {
  if (text.length * 3 <= maxBytes) return { text, truncated: false }
  const bytes = utf8(text)
  if (bytes.length <= maxBytes) return { text, truncated: false }
  const end = utf8SafeHeadLength(bytes, maxBytes)
  return { text: decoder.decode(bytes.subarray(0, end)), truncated: true }
}

/** Preview bytes of a text file as text, bounded (lossy-decoded: it is a preview). */
export function bytesPreview(
  bytes: Uint8Array,
  maxBytes: number,
): { text: string; truncated: boolean } {
  const end = utf8SafeHeadLength(bytes, maxBytes)
  return { text: decoder.decode(bytes.subarray(0, end)), truncated: end < bytes.length }
}
