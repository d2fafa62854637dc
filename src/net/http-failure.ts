import { IsoagentError } from '../errors.ts'
import { timeoutSignal } from './timeout-signal.ts'

/** Longest `Retry-After` honoured by the tools, in ms. */
export const MAX_RETRY_AFTER_MS = 30_000

/**
 * `Retry-After` in ms from `now` (delay-seconds or an HTTP date), or null when absent or
 * unparsable. A date in the past gives 0.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  if (Number.isNaN(at)) return null
  return Math.max(0, at - now)
}

/**
 * The typed error of an HTTP answer a tool cannot use: `rate_limited` (429, with the parsed
 * `Retry-After` in `data.retry_after_ms`), `transport` (408 and 5xx), `not_found` (404, 410),
 * `permission_denied` (401, 403, 407), else `invalid_argument`. Undefined for 2xx.
 */
export function httpStatusError(response: Response, what: string): IsoagentError | undefined {
  const status = response.status
  if (status >= 200 && status < 300) return undefined
  const line = `${what} answered HTTP ${status}${response.statusText ? ` ${response.statusText}` : ''}`
  if (status === 429) {
    const after = parseRetryAfter(response.headers.get('retry-after'))
    return new IsoagentError(
      'rate_limited',
      after === null ? `${line}` : `${line}; retry after ${Math.ceil(after / 1000)} s`,
      { data: { status, retry_after_ms: after } },
    )
  }
  if (status === 408 || status >= 500) {
    const after = parseRetryAfter(response.headers.get('retry-after'))
    return new IsoagentError('transport', line, {
      data: after === null ? { status } : { status, retry_after_ms: after },
    })
  }
  if (status === 404 || status === 410)
    return new IsoagentError('not_found', line, { data: { status } })
  if (status === 401 || status === 403 || status === 407)
    return new IsoagentError('permission_denied', line, { data: { status } })
  return new IsoagentError('invalid_argument', line, { data: { status } })
}

/** An abort signal that fires on `signal` or after `ms` with a `TimeoutError`. */
export function withDeadline(signal: AbortSignal | undefined, ms: number): AbortSignal {
  const limit = timeoutSignal(ms)
  return signal === undefined ? limit : AbortSignal.any([signal, limit])
}

/**
 * Read a body up to `cap` bytes (then stop reading and cancel the rest). Rejects with what the
 * stream rejects with.
 */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  cap: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (body === null) return { bytes: new Uint8Array(0), truncated: false }
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  let truncated = false
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      const room = cap - total
      if (value.length > room) {
        if (room > 0) chunks.push(value.subarray(0, room))
        total += Math.max(0, room)
        truncated = true
        break
      }
      chunks.push(value)
      total += value.length
    }
  } finally {
    if (truncated) await reader.cancel().catch(() => undefined)
    else reader.releaseLock()
  }
  const bytes = new Uint8Array(total)
  let at = 0
  for (const c of chunks) {
    bytes.set(c, at)
    at += c.length
  }
  return { bytes, truncated }
}
