import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { errorResponse } from './api-error.ts'

/**
 * A request-body size limit: a body over `maxBytes` is refused with 413 `payload_too_large`.
 * A request that declares its length (`Content-Length`, no `Transfer-Encoding`) is judged by that
 * header alone, without touching its body, so the body stays on the server's fast path (on Node,
 * `c.req.text()` reads the socket directly instead of through a Web stream). Any other body is
 * counted as it is read, by Hono's `bodyLimit`.
 */
export function limitBody(maxBytes: number): MiddlewareHandler {
  const tooLarge = () =>
    errorResponse(413, 'payload_too_large', `the body is over ${maxBytes} bytes`)
  const counted = bodyLimit({ maxSize: maxBytes, onError: tooLarge })
  return async (c: Context, next) => {
    const headers = c.req.raw.headers
    const length = headers.get('content-length')
    if (length !== null && !headers.has('transfer-encoding'))
      return Number.parseInt(length, 10) > maxBytes ? tooLarge() : next()
    return counted(c, next)
  }
}
