import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A route of the loopback test server. */
export type Route = (req: IncomingMessage, res: ServerResponse, hit: number) => unknown

/** A throwaway HTTP server on 127.0.0.1 with per-path routes and hit counts. */
export interface TestServer {
  origin: string
  port: number
  url(path: string): string
  route(path: string, handler: Route): void
  hits(path: string): number
  /** Headers of the last request to `path`. */
  lastHeaders(path: string): IncomingMessage['headers'] | undefined
  close(): Promise<void>
}

export async function startServer(): Promise<TestServer> {
  const routes = new Map<string, Route>()
  const counts = new Map<string, number>()
  const headers = new Map<string, IncomingMessage['headers']>()
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    const n = (counts.get(path) ?? 0) + 1
    counts.set(path, n)
    headers.set(path, req.headers)
    const handler = routes.get(path)
    if (handler === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' })
      res.end('not found')
      return
    }
    Promise.resolve(handler(req, res, n)).catch((error: unknown) => {
      res.destroy(error as Error)
    })
  })
  server.keepAliveTimeout = 500
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const origin = `http://127.0.0.1:${port}`
  return {
    origin,
    port,
    url: (path) => `${origin}${path}`,
    route: (path, handler) => routes.set(path, handler),
    hits: (path) => counts.get(path) ?? 0,
    lastHeaders: (path) => headers.get(path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/**
 * Serve `body` honouring `Range: bytes=a-b` (one range) and `If-Range` against `etag`, the way
 * a static file server does.
 */
export function rangeServing(
  body: Uint8Array,
  options: { etag?: string; contentType?: string; disposition?: string } = {},
): Route {
  return (req, res) => {
    const base: Record<string, string> = {
      'content-type': options.contentType ?? 'application/octet-stream',
      'accept-ranges': 'bytes',
    }
    if (options.etag !== undefined) base.etag = options.etag
    if (options.disposition !== undefined) base['content-disposition'] = options.disposition
    const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? ''))
    const ifRange = req.headers['if-range']
    const rangeOk = range !== null && (ifRange === undefined || ifRange === options.etag)
    if (!rangeOk) {
      res.writeHead(200, { ...base, 'content-length': String(body.length) })
      res.end(body)
      return
    }
    const first = Number(range[1])
    const last = range[2] === '' ? body.length - 1 : Math.min(Number(range[2]), body.length - 1)
    if (first >= body.length) {
      res.writeHead(416, { 'content-range': `bytes */${body.length}` })
      res.end()
      return
    }
    res.writeHead(206, {
      ...base,
      'content-range': `bytes ${first}-${last}/${body.length}`,
      'content-length': String(last - first + 1),
    })
    res.end(body.subarray(first, last + 1))
  }
}

/** Deterministic pseudo-random bytes. */
export function seededBytes(length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length)
  let x = seed >>> 0 || 1
  for (let i = 0; i < length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = x & 0xff
  }
  return out
}
