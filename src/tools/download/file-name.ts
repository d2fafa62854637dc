/** Name used when neither the response nor the URL gives one. */
export const FALLBACK_FILE_NAME = 'download'
const MAX_NAME_BYTES = 200

function decodeRfc5987(value: string): string | undefined {
  const m = /^([\w!#$%&+^`{}~-]+)'[^']*'(.*)$/.exec(value.trim())
  if (m === null) return undefined
  const charset = (m[1] ?? '').toLowerCase()
  try {
    if (charset === 'utf-8') return decodeURIComponent(m[2] ?? '')
    const bytes = Uint8Array.from(
      (m[2] ?? '').replace(/%([0-9a-f]{2})/gi, (_, h: string) =>
        String.fromCharCode(parseInt(h, 16)),
      ),
      (c) => c.charCodeAt(0),
    )
    return new TextDecoder(charset).decode(bytes)
  } catch {
    return undefined
  }
}

/** The file name a `Content-Disposition` header gives (`filename*` preferred), if any. */
export function dispositionName(header: string | null): string | undefined {
  if (header === null) return undefined
  const star = /(?:^|;)\s*filename\*\s*=\s*("?)([^";]+)\1/i.exec(header)
  const decoded = star?.[2] === undefined ? undefined : decodeRfc5987(star[2])
  if (decoded !== undefined && decoded.trim() !== '') return decoded
  const plain = /(?:^|;)\s*filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))/i.exec(header)
  const name = plain?.[1]?.replace(/\\(.)/g, '$1') ?? plain?.[2]?.trim()
  return name === undefined || name === '' ? undefined : name
}

/** The last path segment of `url`, percent-decoded, if any. */
export function urlName(url: URL): string | undefined {
  const segment = url.pathname
    .split('/')
    .filter((s) => s !== '')
    .pop()
  if (segment === undefined) return undefined
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/**
 * A safe file name from a server- or URL-given one: directories and drive letters stripped,
 * control and reserved characters replaced, no leading dots, at most 200 UTF-8 bytes (the
 * extension kept), never `.`/`..`/empty.
 */
export function sanitizeFileName(name: string | undefined): string {
  let s = (name ?? '').normalize('NFC')
  s = s.split(/[/\\]/).pop() ?? ''
  s = s.replace(/^[a-z]:/i, '')
  // eslint-disable-next-line no-control-regex
  s = s.replace(/[\u0000-\u001f\u007f<>:"|?*\u202a-\u202e\u2066-\u2069]/g, '_')
  s = s
    .trim()
    .replace(/^\.+/, '')
    .replace(/[. ]+$/, '')
  if (s === '') return FALLBACK_FILE_NAME
  const encoder = new TextEncoder()
  if (encoder.encode(s).length > MAX_NAME_BYTES) {
    const dot = s.lastIndexOf('.')
    const ext = dot > 0 && s.length - dot <= 16 ? s.slice(dot) : ''
    let stem = s.slice(0, s.length - ext.length)
    while (encoder.encode(stem + ext).length > MAX_NAME_BYTES)
      stem = [...stem].slice(0, -1).join('')
    s = stem + ext
  }
  return s
}
