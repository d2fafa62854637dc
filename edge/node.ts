// `isoagent/edge/node`: serves a `createApp()` app on Node with @hono/node-server.
// An app served on Node resolves names itself and pins connections to the checked addresses
// (web_fetch, web_search: `address_check: "resolved"`), whatever its workspace.
import '../adapters/node/node-runtime.ts'
export { serve, DEFAULT_PORT, CLOSE_GRACE_MS } from './http/node-server.ts'
export type { ServableApp, ServeOptions, ServerHandle } from './http/node-server.ts'
export { staticDirectory } from './http/static-directory.ts'
