import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  readRequestBody,
} from '@modelcontextprotocol/sdk/server/requestBody.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import { IsoagentError, type Session } from '../../adapters/index.ts'
import {
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_MS,
  SessionPool,
  type PooledSession,
  type SessionSlot,
} from '../session-pool.ts'
import { createMcpServer, type McpServerOptions } from './server.ts'
import type { McpSessions } from './sessions.ts'

/** Default idle time after which an MCP session is closed: 15 minutes. */
export const DEFAULT_MCP_IDLE_MS = DEFAULT_SESSION_IDLE_MS
/** Default most MCP sessions at once. */
export const DEFAULT_MCP_MAX_SESSIONS = DEFAULT_MAX_SESSIONS
/** Milliseconds between SSE comment lines on an open MCP stream (a dead peer is then noticed). */
export const MCP_SSE_HEARTBEAT_MS = 15_000

/** Options of {@link createMcpHandler}. */
export interface McpHandlerOptions<C = unknown> extends McpServerOptions {
  sessions: McpSessions<C>
  /**
   * The id of a new MCP session (default `crypto.randomUUID()`). A Worker that routes each MCP
   * session to its own Durable Object picks the id before forwarding `initialize` and hands it
   * over here (e.g. from a header it set).
   */
  newSessionId?: (request: Request) => string
  /**
   * The pool MCP sessions are held, counted and idled out in, e.g. the one of the app's API
   * sessions (so `maxSessions` bounds both together); `idleMs` and `maxSessions` are then the
   * pool's. Default: a pool of their own.
   */
  pool?: SessionPool
  /** An MCP session without requests for this long (ms) is closed (default 15 min). */
  idleMs?: number
  /** Most MCP sessions at once (default 64); one more `initialize` gets `429`. */
  maxSessions?: number
  /** Largest POST body the transport reads (default: the SDK's 4 MiB). */
  maxRequestBodySize?: number
  /** Runs once an MCP session has ended (DELETE, idle or shutdown), with its id. */
  onSessionClosed?: (id: string) => void | Promise<void>
}

/** The MCP Streamable HTTP endpoint of {@link createMcpHandler}. */
export interface McpHandler<C = unknown> {
  /**
   * Answer one `POST`/`GET`/`DELETE` request of the endpoint (Hono: `handle(c.req.raw, c)`);
   * `context` reaches {@link McpSessions.create}.
   */
  handle(request: Request, context?: C): Promise<Response>
  /** Open MCP sessions now. */
  readonly size: number
  /** Whether the MCP session `id` is open (one that has idled out is closed first). */
  has(id: string): boolean
  /** Close every MCP session and its isoagent session. */
  close(): Promise<void>
}

type Timer = ReturnType<typeof setInterval> & { unref?: () => void }

/** One MCP session: its transport, server and isoagent session, and its use. */
class McpEntry implements PooledSession {
  lastUsed = Date.now()
  inFlight = 0
  closed = false
  constructor(
    readonly transport: WebStandardStreamableHTTPServerTransport,
    readonly server: Server,
    readonly session: Session,
    private readonly finish: (entry: McpEntry) => Promise<void>,
  ) {}

  get id(): string {
    return this.transport.sessionId ?? ''
  }

  /** Idle unless a request or a stream is open or a call runs. */
  idleMs(now: number): number {
    if (this.inFlight > 0 || this.session.activeTools().length > 0) return 0
    return Math.max(0, now - this.lastUsed)
  }

  close(): Promise<void> {
    return this.finish(this)
  }

  /** Count `response` as use until it ends, when it is an SSE stream. */
  holdWhileStreaming(response: Response): Response {
    const body = response.body
    const type = response.headers.get('content-type') ?? ''
    if (body === null || !type.includes('text/event-stream')) return response
    this.inFlight++
    let released = false
    let heartbeat: Timer | undefined
    const release = () => {
      if (released) return
      released = true
      if (heartbeat !== undefined) clearInterval(heartbeat)
      this.inFlight--
      this.lastUsed = Date.now()
    }
    const reader = body.getReader()
    const held = new ReadableStream<Uint8Array>({
      start(controller) {
        // A comment line between the SDK's whole events: a peer that vanished without closing
        // its connection fails the write, which cancels the stream and releases the session.
        heartbeat = setInterval(() => {
          try {
            controller.enqueue(PING)
          } catch {
            release()
          }
        }, MCP_SSE_HEARTBEAT_MS) as Timer
        heartbeat.unref?.()
      },
      async pull(controller) {
        try {
          const { done, value } = await reader.read()
          if (done) {
            release()
            controller.close()
          } else controller.enqueue(value)
        } catch (error) {
          release()
          controller.error(error)
        }
      },
      cancel(reason) {
        release()
        return reader.cancel(reason)
      },
    })
    return new Response(held, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
  }
}

const PING = new TextEncoder().encode(': ping\n\n')

const jsonRpcError = (status: number, code: number, message: string, headers = {}) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  })

/** The request body as JSON, or the error response to answer with. */
async function readInitialize(request: Request, maxBody: number): Promise<unknown> {
  let body: unknown
  try {
    const read = await readRequestBody(request, maxBody)
    if (read.tooLarge) return jsonRpcError(413, -32000, 'Payload Too Large')
    body = JSON.parse(read.text)
  } catch {
    return jsonRpcError(400, -32700, 'Parse error: Invalid JSON')
  }
  // Only an `initialize` opens a session; anything else without a session id is refused before
  // a workspace is touched.
  if (!isInitializeRequest(body))
    return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required')
  return body
}

/**
 * The MCP Streamable HTTP endpoint (`POST`/`GET`/`DELETE /mcp`) over the SDK's Web-standard
 * transport. Each `initialize` starts an MCP session (id from `crypto.randomUUID()`, sent in
 * `mcp-session-id`) with its own isoagent session from `sessions`; later requests name it in
 * the header. `DELETE` or `idleMs` without requests closes both; an unknown or closed
 * session id is `404` (the client then starts over). Past `maxSessions`, `initialize` is a 429
 * whose `Retry-After` says when a held session idles out. Authentication is the caller's job.
 */
export function createMcpHandler<C = unknown>(options: McpHandlerOptions<C>): McpHandler<C> {
  const pool =
    options.pool ??
    new SessionPool({
      maxSessions: options.maxSessions ?? DEFAULT_MCP_MAX_SESSIONS,
      idleMs: options.idleMs ?? DEFAULT_MCP_IDLE_MS,
    })
  const mine = new Set<McpEntry>()
  const entryOf = (id: string): McpEntry | undefined => {
    const entry = pool.get(id)
    return entry instanceof McpEntry && mine.has(entry) && !entry.closed ? entry : undefined
  }

  const finish = async (entry: McpEntry) => {
    if (entry.closed) return
    entry.closed = true
    pool.forget(entry)
    mine.delete(entry)
    await entry.server.close().catch(() => undefined)
    await options.sessions.close(entry.session).catch(() => undefined)
    const id = entry.transport.sessionId
    if (id !== undefined) await Promise.resolve(options.onSessionClosed?.(id)).catch(() => {})
  }

  const use = async (entry: McpEntry, request: Request, parsedBody?: unknown) => {
    entry.inFlight++
    entry.lastUsed = Date.now()
    try {
      return entry.holdWhileStreaming(
        await entry.transport.handleRequest(
          request,
          parsedBody === undefined ? undefined : { parsedBody },
        ),
      )
    } finally {
      entry.inFlight--
      entry.lastUsed = Date.now()
    }
  }

  const maxBody = options.maxRequestBodySize ?? DEFAULT_MAX_REQUEST_BODY_SIZE
  const connect = async (session: Session, request: Request, slot: SessionSlot) => {
    const server = createMcpServer(session, options)
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: options.newSessionId
        ? () => options.newSessionId!(request)
        : () => crypto.randomUUID(),
      onsessioninitialized: () => {
        mine.add(entry)
        slot.fill(entry)
      },
      onsessionclosed: () => finish(entry),
      ...(options.maxRequestBodySize !== undefined
        ? { maxRequestBodySize: options.maxRequestBodySize }
        : {}),
    })
    const entry: McpEntry = new McpEntry(transport, server, session, finish)
    try {
      await server.connect(transport)
    } catch (error) {
      await finish(entry)
      throw error
    }
    return entry
  }

  const open = async (request: Request, context: C): Promise<Response> => {
    const body = await readInitialize(request, maxBody)
    if (body instanceof Response) return body
    // The slot stays taken until the session is in the pool (or given up), so a burst of
    // initializes cannot open more sessions than the cap.
    const slot = pool.reserve()
    if (slot === undefined)
      return jsonRpcError(
        429,
        -32000,
        `too many sessions: this server holds at most ${pool.maxSessions}`,
        {
          'retry-after': String(pool.retryAfterSeconds()),
        },
      )
    try {
      let session: Session
      try {
        session = await options.sessions.create(request, context)
      } catch (error) {
        if (error instanceof Response) return error
        const message =
          error instanceof IsoagentError ? error.message : 'the workspace could not be opened'
        return jsonRpcError(503, -32000, message)
      }
      const entry = await connect(session, request, slot)
      const response = await use(entry, request, body)
      if (entry.transport.sessionId === undefined) await finish(entry)
      return response
    } finally {
      slot.release()
    }
  }

  return {
    async handle(request, context) {
      pool.sweep()
      const id = request.headers.get('mcp-session-id')
      if (id === null) {
        if (request.method !== 'POST')
          return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required')
        return open(request, context as C)
      }
      const entry = entryOf(id)
      if (entry === undefined) return jsonRpcError(404, -32001, 'Session not found')
      return use(entry, request)
    },
    get size() {
      for (const entry of mine) if (entry.closed || pool.get(entry.id) !== entry) mine.delete(entry)
      return mine.size
    },
    has(id) {
      return entryOf(id) !== undefined
    },
    async close() {
      await Promise.all([...mine].map(finish))
    },
  }
}

/** What {@link mountMcp} needs of a request context (a Hono `Context` has it). */
export interface McpRequestContext {
  req: { raw: Request }
}

/** The part of a Hono app {@link mountMcp} needs. */
export interface McpMountable {
  on(method: string[], path: string, handler: (c: McpRequestContext) => Promise<Response>): unknown
}

/**
 * Serve {@link createMcpHandler} at `path` (default `/mcp`) for `POST`, `GET` and `DELETE` on a
 * Hono app; the request's context reaches `sessions.create`. Put it behind the app's
 * bearer-token check.
 */
export function mountMcp<C extends McpRequestContext = McpRequestContext>(
  app: McpMountable,
  options: McpHandlerOptions<C> & { path?: string },
): McpHandler<C> {
  const handler = createMcpHandler(options)
  app.on(['POST', 'GET', 'DELETE'], options.path ?? '/mcp', (c) =>
    handler.handle(c.req.raw, c as C),
  )
  return handler
}
