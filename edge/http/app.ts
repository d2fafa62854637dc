import { Hono, type Context } from 'hono'
import {
  Agent,
  IsoagentError,
  type Session,
  type SessionOptions,
  type ToolDefinition,
  type WorkspaceServices,
} from '../../adapters/index.ts'
import { ApiError, errorResponse } from './api-error.ts'
import { presentedToken, tokenChecker } from './auth.ts'
import { limitBody } from './body-limit.ts'
import { hostGuard } from './host-guard.ts'
import type { EventHistoryLimits, HostedSession } from './hosted-session.ts'
import type { AppContext, RouteSpec } from './route-spec.ts'
import {
  agentMcpSessions,
  createMcpHandler,
  type McpHandler,
  type McpHandlerOptions,
} from '../mcp/index.ts'
import { mcpRoutes } from './mcp-routes.ts'
import { apiRoutes } from './routes.ts'
import { mcpClientRoutes } from './mcp-client-routes.ts'
import { retrievalRoutes } from './retrieval-routes.ts'
import { skillRoutes } from './skill-routes.ts'
import { workflowRoutes } from './workflow-routes.ts'
import { memorySessionStore, type SessionStore } from './session-store.ts'
import { SessionPool } from '../session-pool.ts'
import { VERSION } from '../version.ts'

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

/** The port a request came in on, when the server says (`serve` passes Node's socket). */
function localPortOf(c: Context): number | undefined {
  const env = c.env as { incoming?: { socket?: { localPort?: unknown } } } | undefined
  const port = env?.incoming?.socket?.localPort
  return typeof port === 'number' ? port : undefined
}

const pathPattern = (path: string) =>
  new RegExp('^' + path.replace(/:[A-Za-z_][A-Za-z0-9_]*/g, '[^/]+') + '/?$')

/**
 * The HTTP API over sessions of a workspace, built from Web APIs only: the same app runs under
 * `@hono/node-server` (`serve` from `isoagent/edge/node`) and as a Worker. Routes, errors and
 * limits are those of DESIGN.md "Serving: the HTTP API"; `GET /v1/openapi.json` documents them.
 */
export function createApp(options: AppOptions): IsoagentApp {
  if (typeof options?.workspace !== 'function')
    throw new TypeError('createApp: options.workspace must be a function returning a workspace')
  const agent = options.agent ?? Agent.create()
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
  const checkToken = options.token === undefined ? undefined : tokenChecker(options.token)
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  let toolDefs: ToolDefinition[] | undefined

  const openCore = async (c: Context): Promise<Session> => {
    let workspace: WorkspaceServices
    try {
      workspace = await options.workspace(c)
    } catch (error) {
      throw new ApiError(
        503,
        'workspace_unavailable',
        error instanceof IsoagentError ? error.message : 'the workspace could not be opened',
      )
    }
    let session: Session
    try {
      session = await agent.session(workspace, options.session ?? {})
    } catch (error) {
      await workspace.close?.().catch(() => undefined)
      throw error
    }
    toolDefs ??= session.toolDefinitions()
    return session
  }

  const routes: RouteSpec[] = []
  const ctx: AppContext = {
    store,
    routes,
    version: VERSION,
    openSession: (c) => store.create(() => openCore(c)),
    ...(options.assets ? { assets: options.assets } : {}),
    session(c): HostedSession {
      const hosted = store.get(c.req.param('id') ?? '')
      if (hosted === undefined)
        throw new ApiError(404, 'session_not_found', 'no such session (closed, idle or unknown)')
      return hosted
    },
    async toolDefinitions(c) {
      if (toolDefs === undefined) {
        const session = await openCore(c)
        await session.close()
      }
      return structuredClone(toolDefs!)
    },
  }
  const mcp =
    options.mcp === false
      ? undefined
      : createMcpHandler<Context>({
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
  routes.push(
    ...apiRoutes(ctx),
    ...mcpClientRoutes(ctx, options.session?.net),
    ...retrievalRoutes(ctx),
    ...skillRoutes(ctx),
    ...workflowRoutes(ctx),
    ...(mcp ? mcpRoutes(mcp) : []),
    ...(options.routes?.(ctx) ?? []),
  )

  const authorized = (c: Context) =>
    checkToken === undefined || checkToken(presentedToken(c.req.raw, c.req.url))
  const unauthorized = () =>
    errorResponse(401, 'unauthorized', 'a valid bearer token is required', {
      'www-authenticate': 'Bearer',
    })

  const app = new Hono()
  const checkHost = hostGuard({
    ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    ...(options.trustHost ? { trustHost: true } : {}),
  })
  // Before every route, the assets and the 404: a page under a rebound name gets nothing.
  app.use('*', async (c, next) => {
    const refused = checkHost(c.req.raw, localPortOf(c))
    if (refused !== undefined) return refused
    await next()
  })
  const limit = limitBody(maxBodyBytes)
  for (const route of routes) {
    app.on(route.method, route.path, async (c: Context) => {
      if (route.auth !== false && !authorized(c)) return unauthorized()
      if (route.method === 'GET') return route.handler(c)
      let response: Response | undefined
      const refused = await limit(c, async () => {
        response = await route.handler(c)
      })
      return refused ?? response!
    })
  }
  const patterns = routes.map((r) => ({ method: r.method, re: pathPattern(r.path) }))

  app.notFound(async (c) => {
    if (options.assets && (c.req.method === 'GET' || c.req.method === 'HEAD')) {
      const asset = await options.assets(c.req.raw)
      if (asset !== undefined) return asset
    }
    if (!authorized(c)) return unauthorized()
    const path = new URL(c.req.url).pathname
    const allowed = patterns.filter((p) => p.re.test(path)).map((p) => p.method)
    if (allowed.length > 0) {
      return errorResponse(405, 'method_not_allowed', `${c.req.method} is not allowed here`, {
        allow: [...new Set(allowed)].join(', '),
      })
    }
    return errorResponse(404, 'not_found', 'no such route')
  })
  app.onError((error) => {
    if (error instanceof ApiError) return error.toResponse()
    return errorResponse(500, 'internal_error', 'internal error')
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
