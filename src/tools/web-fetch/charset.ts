/** Charset used when neither the headers nor the document name one. */
export const DEFAULT_CHARSET = 'utf-8'

const META_SCAN_BYTES = 1024

/** The `charset` parameter of a `Content-Type` value, lower-cased, or undefined. */
export function headerCharset(contentType: string | null): string | undefined {
  if (contentType === null) return undefined
  const m = /;\s*charset\s*=\s*("?)([^";\s]+)\1/i.exec(contentType)
  return m?.[2]?.toLowerCase()
}

/** The charset a `<meta charset>` or `<meta http-equiv="Content-Type">` in the first 1 KiB names. */
export function metaCharset(bytes: Uint8Array): string | undefined {
  const head = new TextDecoder('windows-1252').decode(bytes.subarray(0, META_SCAN_BYTES))
  for (const tag of head.matchAll(/<meta\b[^>]*>/gi)) {
    const m = /charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(tag[0])
    if (m?.[1] !== undefined) return m[1].toLowerCase()
  }
  return undefined
}

function bomCharset(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8'
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be'
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le'
  return undefined
}

function decoder(label: string): TextDecoder | undefined {
  try {
    return new TextDecoder(label)
  } catch {
    return undefined
  }
}

/** Decoded text and the charset actually used (`requested` is what the document named). */
export interface DecodedBody {
  text: string
  charset: string
  requested?: string
}

/**
 * Decode a body: a byte-order mark wins, then the `Content-Type` header's charset, then (for
 * HTML) a `<meta>` declaration in the first 1 KiB, else UTF-8. A label the runtime's
 * `TextDecoder` does not know falls back to UTF-8 (`requested` keeps the label).
 */
export function decodeBody(
  bytes: Uint8Array,
  contentType: string | null,
  html: boolean,
): DecodedBody {
  const requested =
    bomCharset(bytes) ?? headerCharset(contentType) ?? (html ? metaCharset(bytes) : undefined)
  const d = requested === undefined ? undefined : decoder(requested)
  if (d === undefined || requested === undefined) {
    const text = new TextDecoder(DEFAULT_CHARSET).decode(bytes)
    return requested === undefined
      ? { text, charset: DEFAULT_CHARSET }
      : { text, charset: DEFAULT_CHARSET, requested }
  }
  return { text: d.decode(bytes), charset: d.encoding }
}
