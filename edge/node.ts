// `isoagent/edge/node`: serves a `createApp()` app on Node with @hono/node-server.
export { serve, DEFAULT_PORT, CLOSE_GRACE_MS } from './http/node-server.ts'
export type { ServableApp, ServeOptions, ServerHandle } from './http/node-server.ts'
export { staticDirectory } from './http/static-directory.ts'
