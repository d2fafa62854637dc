// The Node server of `isoagent/edge/node`: a `createApp()` app on @hono/node-server.
import {
  serve as honoServe,
  type Http2Bindings,
  type HttpBindings,
  type ServerType,
} from '@hono/node-server'
import type { AddressInfo } from 'node:net'
// An app served on Node gets the Node runtime wiring (names resolved and pinned, program guests
// in killable threads), whatever its workspace.
import '../../adapters/node/node-runtime.ts'

/** What {@link serve} needs of an app: a fetch handler and, optionally, a shutdown. */
export interface ServableApp {
  /**
   * `env` holds Node's request and response (`incoming`, `outgoing`): `createApp` reads the
   * port a request came in on from `incoming.socket` to check `Host` and `Origin`.
   */
  fetch: (request: Request, env: HttpBindings | Http2Bindings) => Response | Promise<Response>
  close?: () => Promise<void>
}

/** Options of {@link serve}. */
export interface ServeOptions {
  /** Port to listen on (default 8787; 0 picks a free one). */
  port?: number
  /** Address to bind (default `127.0.0.1`: loopback only). */
  hostname?: string
  /**
   * On SIGINT/SIGTERM, close the server and the app's sessions (ending running `bash` process
   * groups), then exit with 130/143 (default true).
   */
  handleSignals?: boolean
}

/** A listening server. */
export interface ServerHandle {
  /** `http://host:port` (IPv6 hosts in brackets). */
  readonly url: string
  readonly port: number
  readonly hostname: string
  /** The Node server. */
  readonly server: ServerType
  /** Stop accepting, close the app's sessions (streams end, calls abort), close connections. */
  close(): Promise<void>
}

/** Default port of `serve` and `isoagent serve`. */
export const DEFAULT_PORT = 8787

/** How long `close()` waits for open requests before cutting their connections. */
export const CLOSE_GRACE_MS = 2000

/** Serve `app` on `hostname:port`; resolves once listening. */
export function serve(app: ServableApp, options: ServeOptions = {}): Promise<ServerHandle> {
  const hostname = options.hostname ?? '127.0.0.1'
  const port = options.port ?? DEFAULT_PORT
  return new Promise((resolve, reject) => {
    const server = honoServe({
      fetch: (request: Request, env: HttpBindings | Http2Bindings) => app.fetch(request, env),
      port,
      hostname,
    })
    server.once('error', reject)
    server.once('listening', () => {
      server.off('error', reject)
      const address = server.address() as AddressInfo
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
      let closing: Promise<void> | undefined
      const onSignal = (signal: NodeJS.Signals) => {
        void handle.close().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143))
      }
      const handle: ServerHandle = {
        url: `http://${host}:${address.port}`,
        port: address.port,
        hostname: address.address,
        server,
        close() {
          closing ??= (async () => {
            process.off('SIGINT', onSignal)
            process.off('SIGTERM', onSignal)
            const stopped = new Promise<void>((r) => server.close(() => r()))
            if ('closeIdleConnections' in server) server.closeIdleConnections()
            await app.close?.()
            // Event streams end with their sessions; their connections are idle a moment later.
            await new Promise((r) => setTimeout(r, 20))
            if ('closeIdleConnections' in server) server.closeIdleConnections()
            const timer = setTimeout(() => {
              if ('closeAllConnections' in server) server.closeAllConnections()
            }, CLOSE_GRACE_MS)
            timer.unref()
            await stopped
            clearTimeout(timer)
          })()
          return closing
        },
      }
      if (options.handleSignals !== false) {
        process.once('SIGINT', onSignal)
        process.once('SIGTERM', onSignal)
      }
      resolve(handle)
    })
  })
}
