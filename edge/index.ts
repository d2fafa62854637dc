// `isoagent/edge`: the HTTP API (a Hono app from Web APIs only) and the MCP endpoint (`edge/mcp/`),
// beside the isomorphic core. Nothing here reaches `edge/cloudflare/` (the Worker).
export * from '../adapters/index.ts'
export { createApp, DEFAULT_MAX_BODY_BYTES } from './http/app.ts'
export type { AppOptions, IsoagentApp, StaticAssets } from './http/app.ts'
export { ApiError, errorResponse } from './http/api-error.ts'
export type { ApiErrorBody, ApiErrorCode } from './http/api-error.ts'
export {
  memorySessionStore,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_MS,
} from './http/session-store.ts'
export type { MemorySessionStoreOptions, SessionStore } from './http/session-store.ts'
export { HostedSession, DEFAULT_EVENT_HISTORY } from './http/hosted-session.ts'
export type { EventHistoryLimits, EventReplay, SequencedEvent } from './http/hosted-session.ts'
export type { AppContext, RouteParameter, RouteResponse, RouteSpec } from './http/route-spec.ts'
export { buildOpenApi, openApiPath } from './http/openapi.ts'
export type { OpenApiDocument } from './http/openapi.ts'
export { VERSION } from './version.ts'
export * from './mcp/index.ts'
