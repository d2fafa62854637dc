import { Hono, type Context } from 'hono'
import { Agent, type SessionOptions, type WorkspaceServices } from '../../adapters/index.ts'
import { appContext } from './app-context.ts'
import type { EventHistoryLimits } from './hosted-session.ts'
import type { AppContext, RouteSpec } from './route-spec.ts'
import {
  agentMcpSessions,
  createMcpHandler,
  type McpHandler,
  type McpHandlerOptions,
} from '../mcp/index.ts'
import { mcpRoutes } from './mcp-routes.ts'
import { mountRoutes } from './mount-routes.ts'
import { apiRoutes } from './routes.ts'
import { mcpClientRoutes } from './mcp-client-routes.ts'
import { retrievalRoutes } from './retrieval-routes.ts'
import { skillRoutes } from './skill-routes.ts'
import { workflowRoutes } from './workflow-routes.ts'
import { memorySessionStore, type SessionStore } from './session-store.ts'
import { SessionPool } from '../session-pool.ts'

/** Default largest request body: 8 MiB; a larger one is refused with 413. */
export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024

/** Options of {@link createApp}. */
export interface AppOptions {
  /**
   * The workspace a new session works on, per request (a Worker reads its bindings from
   * `c.env`). Called once per session; the session closes what it returns when it closes.
   */
  workspace: (c: Context) => WorkspaceServices | Promise<WorkspaceServices>
  /** Bearer token required by every route but `GET /v1/health`; none: no authentication. */
  token?: string
  /** Permissions, hooks, budget, policy, ... of every session. */
  session?: SessionOptions
  /**
   * Most sessions at once, API and MCP sessions together (default 64); past it
   * `POST /v1/sessions` and an MCP `initialize` answer 429 with `Retry-After`.
   */
  maxSessions?: number
  /** A session without requests or event streams for this long (ms) is closed (default 15 min). */
  sessionIdleMs?: number
  /** Largest request body in bytes (default 8 MiB); larger: 413. */
  maxBodyBytes?: number
  /** Bounds of each session's event history (what `Last-Event-ID` can replay). */
  eventHistory?: EventHistoryLimits
  /**
   * Where sessions are kept (default: in memory, bounded by `maxSessions` and `sessionIdleMs`).
   * A Worker passes a store that holds the one session of its Durable Object.
   */
  store?: SessionStore
  /** The agent sessions are created by (default `Agent.create()`). */
  agent?: Agent
  /**
   * More routes, mounted beside the API and documented in the same OpenAPI document (the MCP
   * endpoint `/mcp` mounts here). They see the app's context: its store and its sessions.
   */
  routes?: (ctx: AppContext) => RouteSpec[]
  /**
   * The MCP Streamable HTTP endpoint `POST`/`GET`/`DELETE /mcp` (default on): each MCP session
   * gets a session of its own over `workspace`, with `session` options, `maxSessions` and
   * `sessionIdleMs` applied as to the API's sessions. `false` leaves it out.
   */
  mcp?: boolean | Omit<McpHandlerOptions<Context>, 'sessions' | 'maxSessions' | 'idleMs' | 'pool'>
  /**
   * Static files served without a token for `GET`/`HEAD` requests no route answers, and for
   * `GET /` in place of the landing page (`isoagent serve` passes the web demo's build). An
   * `undefined` answer falls through to the landing page or the usual 404.
   */
  assets?: StaticAssets
  /**
   * Host names a request may name in `Host` and `Origin` besides loopback names and IP literals
   * on the port the request came in on (a deployment behind a proxy or under a DNS name):
   * `example.com`, `example.com:8443`, `.example.com` (and its subdomains), `*` (no check). Any
   * other name is refused with 403 `host_not_allowed`, which defeats DNS rebinding.
   */
  allowedHosts?: readonly string[]
  /**
   * Every `Host` is this server's own, as on a platform that routes requests by it (the Worker
   * sets this); `Origin`, when sent, must still name that host or an allowed one.
   */
  trustHost?: boolean
}

/** A static file server: the response for a request's path, or `undefined` when none is held. */
export type StaticAssets = (
  request: Request,
) => Response | undefined | Promise<Response | undefined>

/** The Hono app of {@link createApp}, with its session store and a shutdown. */
export type IsoagentApp = Hono & {
  /** The app's context (store, sessions, route table). */
  readonly context: AppContext
  /** The MCP endpoint's handler (undefined with `mcp: false`). */
  readonly mcp: McpHandler<Context> | undefined
  /** Close every session: running calls (and `bash` process groups) end, streams end. */
  close(): Promise<void>
}

/** The session pool API and MCP sessions share, and the store of the API's sessions. */
function sessionStorage(options: AppOptions): {
  pool: SessionPool | undefined
  store: SessionStore
} {
  // API and MCP sessions share one pool, so `maxSessions` bounds them together (a custom store
  // keeps its own sessions; MCP then gets a pool of its own with the same limits).
  const pool =
    options.store === undefined
      ? new SessionPool({
          ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
          ...(options.sessionIdleMs !== undefined ? { idleMs: options.sessionIdleMs } : {}),
        })
      : undefined
  const store =
    options.store ??
    memorySessionStore({
      ...(pool ? { pool } : {}),
      ...(options.eventHistory ? { eventHistory: options.eventHistory } : {}),
    })
  return { pool, store }
}

/** The MCP endpoint's handler over sessions of `agent`, or undefined with `mcp: false`. */
function mcpHandlerOf(
  options: AppOptions,
  agent: Agent,
  pool: SessionPool | undefined,
): McpHandler<Context> | undefined {
  if (options.mcp === false) return undefined
  return createMcpHandler<Context>({
    ...(typeof options.mcp === 'object' ? options.mcp : {}),
    sessions: agentMcpSessions<Context>({
      workspace: (_request, c) => options.workspace(c),
      ...(options.session ? { session: options.session } : {}),
      agent,
    }),
    ...(pool ? { pool } : {}),
    ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
    ...(options.sessionIdleMs !== undefined ? { idleMs: options.sessionIdleMs } : {}),
  })
}

/** Every route of the app: the API, MCP client, retrieval, skills, workflows, MCP, extras. */
function routeTable(
  ctx: AppContext,
  options: AppOptions,
  mcp: McpHandler<Context> | undefined,
): RouteSpec[] {
  return [
    ...apiRoutes(ctx),
    ...mcpClientRoutes(ctx, options.session?.net),
    ...retrievalRoutes(ctx),
    ...skillRoutes(ctx),
    ...workflowRoutes(ctx),
    ...(mcp ? mcpRoutes(mcp) : []),
    ...(options.routes?.(ctx) ?? []),
  ]
}

/**
 * The HTTP API over sessions of a workspace, built from Web APIs only: the same app runs under
 * `@hono/node-server` (`serve` from `isoagent/edge/node`) and as a Worker. Routes, errors and
 * limits are those of DESIGN.md "Serving: the HTTP API"; `GET /v1/openapi.json` documents them.
 */
export function createApp(options: AppOptions): IsoagentApp {
  if (typeof options?.workspace !== 'function')
    throw new TypeError('createApp: options.workspace must be a function returning a workspace')
  const agent = options.agent ?? Agent.create()
  const { pool, store } = sessionStorage(options)
  const routes: RouteSpec[] = []
  const ctx = appContext({
    workspace: options.workspace,
    session: options.session,
    agent,
    store,
    routes,
    assets: options.assets,
  })
  const mcp = mcpHandlerOf(options, agent, pool)
  routes.push(...routeTable(ctx, options, mcp))
  const app = new Hono()
  mountRoutes(app, routes, {
    token: options.token,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    assets: options.assets,
    allowedHosts: options.allowedHosts,
    trustHost: options.trustHost,
  })
  return Object.assign(app, {
    context: ctx,
    mcp,
    close: async () => {
      await Promise.all([mcp?.close(), store.closeAll()])
      await pool?.closeAll()
    },
  })
}
