// The isoagent Worker: the HTTP API of `createApp` on Cloudflare Workers, each session in its own
// Durable Object (`IsoagentSession`), so every request of a session and its event stream reach
// one object; so does each MCP session of `/mcp`. `wrangler.toml` names this file as `main`.
import quickJsWasm from '@jitl/quickjs-wasmfile-release-sync/wasm'
import { type SessionOptions, type SessionSnapshot } from '../../adapters/index.ts'
import { errorResponse } from '../http/api-error.ts'
import {
  createApp,
  DEFAULT_MAX_BODY_BYTES,
  type AppOptions,
  type IsoagentApp,
} from '../http/app.ts'
import { presentedToken, tokenChecker } from '../http/auth.ts'
import { objectSessionStore, type ObjectSessionStore } from './object-session-store.ts'
import {
  agentFromEnv,
  ConfigError,
  workerSettings,
  workspaceFromEnv,
  type DurableObjectStateLike,
  type DurableObjectStorageLike,
  type WorkerEnv,
  type WorkerSettings,
} from './env.ts'
import { IsoagentRegistry, leaseMs, registryClient } from './registry.ts'
import { durableObjectWorkflowStore, hasSqlStorage } from './object-workflow-store.ts'
import { workerTreeSitterSymbols } from './tree-sitter.ts'

export { IsoagentRegistry }
export type { WorkerEnv, WorkerSettings } from './env.ts'
export {
  workerSettings,
  workspaceFromEnv,
  modelFromEnv,
  agentFromEnv,
  embeddingsFromEnv,
  mcpServersFromEnv,
  ConfigError,
} from './env.ts'
export { durableObjectWorkflowStore } from './object-workflow-store.ts'

/** Set by the front Worker on the request that creates a session: the session's id. */
const NEW_SESSION_HEADER = 'x-isoagent-new-session'
/** Set by the front Worker on an MCP request without a session: the MCP session's id. */
const NEW_MCP_SESSION_HEADER = 'x-isoagent-new-mcp-session'
const SESSION_PATH = /^\/v1\/sessions\/([^/]+)(?:\/.*)?$/
/** Objects of MCP sessions are named apart from those of API sessions. */
const MCP_OBJECT_PREFIX = 'mcp:'
const STORED_SESSION = 'session'
const STORED_MCP = 'mcp'

/** What a session's object keeps in its storage, so the session outlives the object's memory. */
interface StoredSession {
  id: string
  openedAt: number
  /** The session's snapshot after its latest request. */
  snapshot?: SessionSnapshot
  /** The number of its latest event. */
  lastSeq?: number
}

/** How much of a refused body is read before answering (beyond it the connection is cut). */
const DRAIN_LIMIT = 4 * DEFAULT_MAX_BODY_BYTES

/**
 * The request body, read whole when it is at most `max` bytes; else `undefined`, after reading
 * and dropping the rest (up to {@link DRAIN_LIMIT}). workerd cuts a connection whose request body
 * is still coming when the answer goes out, and the client then sees a reset, not the 413.
 */
async function readBounded(body: ReadableStream<Uint8Array>, max: number) {
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let read = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      read += value.byteLength
      if (read > DRAIN_LIMIT) {
        await reader.cancel()
        break
      }
      if (read <= max) chunks.push(value)
      else chunks.length = 0
    }
  } catch {
    return undefined
  }
  if (read > max) return undefined
  const bytes = new Uint8Array(read)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.byteLength
  }
  return bytes
}

/** Whether a JSON-RPC body is (or holds) an MCP `initialize` request. */
function isInitialize(bytes: Uint8Array | undefined): boolean {
  if (bytes === undefined) return false
  try {
    const body: unknown = JSON.parse(new TextDecoder().decode(bytes))
    const messages = Array.isArray(body) ? body : [body]
    return messages.some(
      (m) =>
        typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize',
    )
  } catch {
    return false
  }
}

const notConfigured = (error: unknown) =>
  errorResponse(
    503,
    'not_configured',
    error instanceof ConfigError ? error.message : 'the Worker is not configured',
  )

/**
 * `SessionOptions.workflows` of the settings: in a session's object (`storage`) an `object`
 * setting journals runs in its SQLite storage; the front Worker (no storage) and `workspace`
 * use the workspace's `.a3s/workflow` files.
 */
function workflowOptions(
  settings: WorkerSettings,
  storage: DurableObjectStorageLike | undefined,
): Pick<SessionOptions, 'workflows'> {
  if (settings.workflows === undefined) return {}
  if (settings.workflows === 'object' && storage !== undefined) {
    if (!hasSqlStorage(storage))
      throw new ConfigError('ISOAGENT_WORKFLOWS=object needs a SQLite-backed session object')
    return { workflows: { store: durableObjectWorkflowStore(storage) } }
  }
  return { workflows: {} }
}

// workerd compiles no WebAssembly from bytes: `program` gets QuickJS as the bundle's own module.
const sessionOptions = (
  settings: WorkerSettings,
  storage?: DurableObjectStorageLike,
): SessionOptions => ({
  quickjs: quickJsWasm,
  ...(settings.permissions ? { permissions: settings.permissions } : {}),
  // Hybrid search's symbol channel reads definitions with tree-sitter (grammars bundled).
  ...(settings.embeddings
    ? { retrieval: { embeddings: settings.embeddings, symbols: workerTreeSitterSymbols } }
    : {}),
  ...workflowOptions(settings, storage),
})

/**
 * The `Retry-After` of a 429: the registry counts leases, not idle times, so the most a held
 * session that nobody uses can take to idle out (its object's alarm closes it then).
 */
const retryAfter = (settings: WorkerSettings) => String(Math.ceil(settings.sessionIdleMs / 1000))

/** Options of {@link createWorker}. */
export interface WorkerOptions {
  /**
   * More routes in the front Worker, beside the API and in its OpenAPI document. They run
   * outside any session object, so they must not keep state between requests.
   */
  routes?: AppOptions['routes']
}

/** The front Worker's `fetch` handler. */
export interface IsoagentWorker {
  fetch(request: Request, env: WorkerEnv): Promise<Response>
}

interface Front {
  settings: WorkerSettings
  app: IsoagentApp
  authorized: (request: Request, url: URL) => boolean
}

/**
 * The front Worker: it answers health, the landing page, OpenAPI and every refusal itself,
 * opens sessions (taking a slot in the registry, then creating the session's object under a
 * fresh id), forwards every `/v1/sessions/:id/...` request to the object named `:id`, and every
 * `/mcp` request to the object of its MCP session (a new one for `initialize`).
 */
export function createWorker(options: WorkerOptions = {}): IsoagentWorker {
  const fronts = new WeakMap<WorkerEnv, Front | ConfigError>()
  const frontOf = (env: WorkerEnv): Front | ConfigError => {
    let front = fronts.get(env)
    if (front === undefined) {
      try {
        const settings = workerSettings(env)
        const check = tokenChecker(settings.token)
        front = {
          settings,
          app: createApp({
            workspace: () => workspaceFromEnv(env),
            token: settings.token,
            session: sessionOptions(settings),
            agent: agentFromEnv(env),
            // Cloudflare routes requests here by Host: it is the Worker's own; Origin is checked.
            trustHost: true,
            ...(options.routes ? { routes: options.routes } : {}),
          }),
          authorized: (request, url) => check(presentedToken(request, url)),
        }
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error
        front = error
      }
      fronts.set(env, front)
    }
    return front
  }

  const openSession = async (request: Request, env: WorkerEnv, settings: WorkerSettings) => {
    const id = crypto.randomUUID()
    const registry = registryClient(env.REGISTRY)
    if (
      registry &&
      !(await registry.reserve(id, settings.maxSessions, leaseMs(settings.sessionIdleMs)))
    )
      return errorResponse(
        429,
        'too_many_sessions',
        `this server holds at most ${settings.maxSessions} sessions; close one (DELETE /v1/sessions/:id) or wait for an idle one to expire`,
        { 'retry-after': retryAfter(settings) },
      )
    const headers = new Headers(request.headers)
    headers.set(NEW_SESSION_HEADER, id)
    let response: Response
    try {
      response = await env.SESSIONS.get(env.SESSIONS.idFromName(id)).fetch(
        new Request(request, { headers }),
      )
    } catch (error) {
      await registry?.release(id)
      throw error
    }
    if (response.status !== 201) await registry?.release(id)
    return response
  }

  // An MCP session counts against ISOAGENT_MAX_SESSIONS like an API session: its lease (named
  // as its object is) is taken before `initialize` reaches the object.
  const openMcpSession = async (
    request: Request,
    headers: Headers,
    env: WorkerEnv,
    settings: WorkerSettings,
  ) => {
    const id = crypto.randomUUID()
    const name = MCP_OBJECT_PREFIX + id
    // Only an `initialize` opens an MCP session: anything else goes on to be refused by the
    // object, without a lease (the registry is not asked).
    const bytes =
      request.body === null ? undefined : await readBounded(request.body, DEFAULT_MAX_BODY_BYTES)
    if (request.body !== null && bytes === undefined)
      return new Response(
        JSON.stringify({
          jsonrpc: '2.0',
          error: { code: -32000, message: 'Payload Too Large' },
          id: null,
        }),
        { status: 413, headers: { 'content-type': 'application/json' } },
      )
    const forward = new Request(request, bytes !== undefined ? { body: bytes } : {})
    const registry = isInitialize(bytes) ? registryClient(env.REGISTRY) : undefined
    if (
      registry &&
      !(await registry.reserve(name, settings.maxSessions, leaseMs(settings.sessionIdleMs)))
    ) {
      return new Response(
        JSON.stringify({
          jsonrpc: '2.0',
          error: {
            code: -32000,
            message: `this server holds at most ${settings.maxSessions} sessions`,
          },
          id: null,
        }),
        {
          status: 429,
          headers: { 'content-type': 'application/json', 'retry-after': retryAfter(settings) },
        },
      )
    }
    headers.set(NEW_MCP_SESSION_HEADER, id)
    let response: Response
    try {
      response = await env.SESSIONS.get(env.SESSIONS.idFromName(name)).fetch(
        new Request(forward, { headers }),
      )
    } catch (error) {
      await registry?.release(name)
      throw error
    }
    if (registry && response.headers.get('mcp-session-id') === null) await registry.release(name)
    return response
  }

  return {
    async fetch(request, env) {
      const front = frontOf(env)
      if (front instanceof ConfigError) return notConfigured(front)
      const url = new URL(request.url)
      if (!front.authorized(request, url)) return front.app.fetch(request, env)
      if (request.method === 'POST' && url.pathname === '/v1/sessions')
        return openSession(request, env, front.settings)
      const headers = new Headers(request.headers)
      headers.delete(NEW_SESSION_HEADER)
      headers.delete(NEW_MCP_SESSION_HEADER)
      let name: string
      if (url.pathname === '/mcp') {
        // An MCP session lives in an object too: `initialize` (no session id yet) goes to a new
        // one, whose transport takes the id the object is named by; later requests follow it.
        const id = request.headers.get('mcp-session-id')
        if (id === null && request.method === 'POST')
          return openMcpSession(request, headers, env, front.settings)
        name = MCP_OBJECT_PREFIX + (id ?? crypto.randomUUID())
      } else {
        const match = SESSION_PATH.exec(url.pathname)
        if (match === null) return front.app.fetch(request, env)
        name = match[1]!
      }
      return env.SESSIONS.get(env.SESSIONS.idFromName(name)).fetch(
        new Request(request, { headers }),
      )
    },
  }
}

/**
 * The Durable Object of one session (an API session, or an MCP session of `/mcp`). It serves
 * the routes of `createApp` over a store holding just this session; its workspace comes from the bindings (a memory workspace lives
 * inside the object, one per session). An alarm closes the session once it has been idle for
 * `ISOAGENT_SESSION_IDLE_MS`, and renews its registry lease while it is in use.
 */
export class IsoagentSession {
  private assignedId: string | undefined
  private app: IsoagentApp | undefined
  private store: ObjectSessionStore | undefined
  private persisted: string | undefined
  private restoring: Promise<void> | undefined

  constructor(
    private readonly state: DurableObjectStateLike,
    private readonly env: WorkerEnv,
  ) {}

  async fetch(request: Request): Promise<Response> {
    let settings: WorkerSettings
    try {
      settings = workerSettings(this.env)
    } catch (error) {
      return notConfigured(error)
    }
    const creating = request.headers.get(NEW_SESSION_HEADER)
    if (creating !== null) this.assignedId ??= creating
    this.app ??= this.build(settings)
    if (request.body !== null) {
      const bytes = await readBounded(request.body, DEFAULT_MAX_BODY_BYTES)
      if (bytes === undefined)
        return errorResponse(
          413,
          'payload_too_large',
          `the body is over ${DEFAULT_MAX_BODY_BYTES} bytes`,
        )
      request = new Request(request, { body: bytes })
    }
    if (
      creating === null &&
      this.store!.current === undefined &&
      new URL(request.url).pathname !== '/mcp'
    )
      await (this.restoring ??= this.restore(settings).finally(() => (this.restoring = undefined)))
    const response = await this.app.fetch(request, this.env)
    if (creating !== null && response.status === 201)
      await this.state.storage.setAlarm(Date.now() + settings.sessionIdleMs)
    const mcpId = request.headers.get(NEW_MCP_SESSION_HEADER)
    if (mcpId !== null && response.headers.get('mcp-session-id') === mcpId) {
      await this.state.storage.put(STORED_MCP, { id: mcpId })
      await this.state.storage.setAlarm(Date.now() + settings.sessionIdleMs)
    }
    await this.persist()
    return response
  }

  /** Keep the session's snapshot in storage (when it changed), for {@link restore}. */
  private async persist(): Promise<void> {
    const current = this.store?.current
    if (current === undefined || current.closed) return
    const stored: StoredSession = {
      id: current.id,
      openedAt: current.createdAt,
      snapshot: current.session.snapshot(),
      lastSeq: current.lastSeq,
    }
    const json = JSON.stringify(stored)
    if (json === this.persisted) return
    await this.state.storage.put(STORED_SESSION, stored)
    this.persisted = json
  }

  /**
   * The object lost its memory (evicted, restarted) but its storage holds a session that was
   * never closed: resume it from its snapshot over the same workspace bindings. A memory
   * workspace died with the object's memory, so such a session is gone (404).
   */
  private async restore(settings: WorkerSettings): Promise<void> {
    const stored = await this.state.storage.get<StoredSession>(STORED_SESSION)
    if (stored?.snapshot === undefined || stored.snapshot.workspace.kind === 'memory') return
    try {
      const session = await agentFromEnv(this.env).resumeSession(stored.snapshot, {
        ...sessionOptions(settings, this.state.storage),
        workspace: workspaceFromEnv(this.env),
      })
      this.assignedId = stored.id
      this.store!.restore(stored.id, session, stored.lastSeq ?? 0)
      await this.state.storage.setAlarm(Date.now() + settings.sessionIdleMs)
    } catch {
      // Not resumable (bindings changed): the session is gone; the alarm forgets it.
    }
  }

  async alarm(): Promise<void> {
    const settings = workerSettings(this.env)
    const mcp = await this.state.storage.get<{ id: string }>(STORED_MCP)
    if (mcp !== undefined) {
      if (this.app?.mcp?.has(mcp.id)) {
        await this.state.storage.setAlarm(Date.now() + settings.sessionIdleMs)
        await registryClient(this.env.REGISTRY)?.renew(
          MCP_OBJECT_PREFIX + mcp.id,
          leaseMs(settings.sessionIdleMs),
        )
      } else await this.forgetMcp(mcp.id)
      return
    }
    const current = this.store?.current
    if (current !== undefined) {
      if (await this.store!.closeIfIdle()) return
      const wait = Math.max(50, settings.sessionIdleMs - current.idleMs())
      await this.state.storage.setAlarm(Date.now() + wait)
      await registryClient(this.env.REGISTRY)?.renew(current.id, leaseMs(settings.sessionIdleMs))
      return
    }
    // No session in memory: it was closed, or the object was reset; forget what is stored.
    const stored = await this.state.storage.get<{ id: string }>(STORED_SESSION)
    await this.forget(stored?.id)
  }

  private async forgetMcp(id: string): Promise<void> {
    await registryClient(this.env.REGISTRY)?.release(MCP_OBJECT_PREFIX + id)
    await this.state.storage.delete(STORED_MCP)
    await this.state.storage.deleteAlarm()
  }

  private async forget(id: string | undefined): Promise<void> {
    if (id !== undefined) await registryClient(this.env.REGISTRY)?.release(id)
    await this.state.storage.delete(STORED_SESSION)
    await this.state.storage.deleteAlarm()
  }

  private build(settings: WorkerSettings): IsoagentApp {
    this.store = objectSessionStore({
      assignedId: () => this.assignedId,
      sessionIdleMs: settings.sessionIdleMs,
      onClosed: (id) => this.forget(id),
    })
    return createApp({
      workspace: () => workspaceFromEnv(this.env),
      token: settings.token,
      session: sessionOptions(settings, this.state.storage),
      agent: agentFromEnv(this.env),
      trustHost: true,
      store: this.store,
      sessionIdleMs: settings.sessionIdleMs,
      // The object of an MCP session holds that one; its id is the one the object is named by.
      maxSessions: 1,
      mcp: {
        newSessionId: (request) =>
          request.headers.get(NEW_MCP_SESSION_HEADER) ?? crypto.randomUUID(),
        onSessionClosed: (id) => this.forgetMcp(id),
      },
    })
  }
}

export default createWorker()
