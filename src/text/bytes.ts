import { sha256 } from '@noble/hashes/sha2.js'
import { IsoagentError } from '../errors.ts'

const encoder = new TextEncoder()

/** Bytes scanned for a NUL to call a file binary (ripgrep's and git's rule). */
export const BINARY_SNIFF_BYTES = 8192

/** UTF-8 bytes of `text`. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text)
}

/** UTF-8 byte length of `text`, without allocating for pure-ASCII strings. */
export function utf8Length(text: string): number {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) bytes += 1
    else if (c < 0x800) bytes += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        i++
      } else bytes += 3
    } else bytes += 3
  }
  return bytes
}

/** True when the first {@link BINARY_SNIFF_BYTES} bytes contain a NUL. */
export function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, BINARY_SNIFF_BYTES)
  return bytes.subarray(0, end).indexOf(0) !== -1
}

/**
 * Decode UTF-8 strictly (a BOM is kept as U+FEFF). Throws `IsoagentError` `invalid_utf8` with
 * the byte offset of the first bad sequence.
 */
export function decodeUtf8(bytes: Uint8Array, path?: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch (cause) {
    const at = firstInvalidUtf8(bytes)
    throw new IsoagentError(
      'invalid_utf8',
      `${path ?? 'content'} is not valid UTF-8 (first invalid byte at offset ${at}); text tools only handle UTF-8`,
      { data: { path, offset: at }, cause },
    )
  }
}

/** Refuse binary content for text tools, then decode it strictly. */
export function decodeTextFile(bytes: Uint8Array, path: string): string {
  if (looksBinary(bytes)) {
    throw new IsoagentError(
      'binary_file',
      `${path} is a binary file (NUL byte in its first 8 KiB); text tools refuse it`,
      {
        data: { path },
      },
    )
  }
  return decodeUtf8(bytes, path)
}

/** Offset of the first byte that starts an invalid UTF-8 sequence (or `bytes.length`). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0
  while (i < bytes.length) {
    const b = bytes[i]!
    let need: number
    let min: number
    if (b < 0x80) {
      i++
      continue
    } else if (b >= 0xc2 && b <= 0xdf) {
      need = 1
      min = 0x80
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2
      min = 0x800
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3
      min = 0x10000
    } else return i
    let cp = b & (0xff >> (need + 2))
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k]
      if (c === undefined || (c & 0xc0) !== 0x80) return i
      cp = (cp << 6) | (c & 0x3f)
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i
    i += need + 1
  }
  return bytes.length
}

/** Below this size a synchronous JS SHA-256 beats Web Crypto's asynchronous round trip. */
const SMALL_DIGEST_BYTES = 4096

function hex(digest: Uint8Array): string {
  let out = ''
  for (const byte of digest) out += byte.toString(16).padStart(2, '0')
  return out
}

/** Lower-case hex SHA-256 of `bytes` (a JS implementation for small inputs, Web Crypto above). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  if (bytes.length < SMALL_DIGEST_BYTES) return hex(sha256(bytes))
  return hex(
    new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)),
  )
}

/** Concatenate byte arrays. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let total = 0
  for (const p of parts) total += p.length
  const out = new Uint8Array(total)
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/** True when `a` and `b` hold the same bytes. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
