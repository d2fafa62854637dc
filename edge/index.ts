// `isoagent/edge`: the HTTP API (a Hono app from Web APIs only), beside the isomorphic core.
export * from '../adapters/index.ts'
export { createApp, DEFAULT_MAX_BODY_BYTES } from './app.ts'
export type { AppOptions, IsoagentApp, StaticAssets } from './app.ts'
export { ApiError, errorResponse } from './api-error.ts'
export type { ApiErrorBody, ApiErrorCode } from './api-error.ts'
export {
  memorySessionStore,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_MS,
} from './session-store.ts'
export type { MemorySessionStoreOptions, SessionStore } from './session-store.ts'
export { HostedSession, DEFAULT_EVENT_HISTORY } from './hosted-session.ts'
export type { EventHistoryLimits, EventReplay, SequencedEvent } from './hosted-session.ts'
export type { AppContext, RouteParameter, RouteResponse, RouteSpec } from './route-spec.ts'
export { buildOpenApi, openApiPath } from './openapi.ts'
export type { OpenApiDocument } from './openapi.ts'
export { VERSION } from './version.ts'
