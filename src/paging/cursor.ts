import { IsoagentError } from '../errors.ts'

const encoder = new TextEncoder()
const decoder = new TextDecoder('utf-8', { fatal: true })

/** Largest cursor accepted, in characters. */
export const MAX_CURSOR_LENGTH = 8192

function toBase64Url(bytes: Uint8Array): string {
  let binary = ''
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')
}

function fromBase64Url(text: string): Uint8Array {
  const padded = text.replaceAll('-', '+').replaceAll('_', '/') + '==='.slice((text.length + 3) % 4)
  const binary = atob(padded)
  const out = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i)
  return out
}

/**
 * Encode a paging position as an opaque cursor. `kind` names the listing it belongs to (a tool
 * and its query) so a cursor from another listing is refused, never silently restarted.
 */
export function encodeCursor(kind: string, position: Record<string, unknown>): string {
  return toBase64Url(encoder.encode(JSON.stringify({ v: 1, k: kind, ...position })))
}

/**
 * Decode a cursor made by {@link encodeCursor} for the same `kind`. Throws `IsoagentError`
 * `invalid_argument` for anything else (forged, truncated, from another listing).
 */
export function decodeCursor(kind: string, cursor: string): Record<string, unknown> {
  const refuse = (why: string) =>
    new IsoagentError(
      'invalid_argument',
      `invalid cursor: ${why}; pass metadata.next_cursor from the previous page unchanged`,
      {
        data: { cursor: cursor.slice(0, 80) },
      },
    )
  if (
    cursor.length === 0 ||
    cursor.length > MAX_CURSOR_LENGTH ||
    !/^[A-Za-z0-9_-]+$/.test(cursor)
  ) {
    throw refuse('not a cursor')
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(decoder.decode(fromBase64Url(cursor)))
  } catch {
    throw refuse('not a cursor')
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw refuse('not a cursor')
  const record = parsed as Record<string, unknown>
  if (record.v !== 1) throw refuse('unknown cursor version')
  if (record.k !== kind) throw refuse('it belongs to a different listing or query')
  return record
}
