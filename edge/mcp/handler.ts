import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  readRequestBody,
} from '@modelcontextprotocol/sdk/server/requestBody.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import { IsoagentError, type Session } from '../../adapters/index.ts'
import { createMcpServer, type McpServerOptions } from './server.ts'
import type { McpSessions } from './sessions.ts'

/** Default idle time after which an MCP session is closed: 15 minutes. */
export const DEFAULT_MCP_IDLE_MS = 15 * 60 * 1000
/** Default most MCP sessions at once. */
export const DEFAULT_MCP_MAX_SESSIONS = 64

/** Options of {@link createMcpHandler}. */
export interface McpHandlerOptions<C = unknown> extends McpServerOptions {
  sessions: McpSessions<C>
  /**
   * The id of a new MCP session (default `crypto.randomUUID()`). A Worker that routes each MCP
   * session to its own Durable Object picks the id before forwarding `initialize` and hands it
   * over here (e.g. from a header it set).
   */
  newSessionId?: (request: Request) => string
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
  /** Whether the MCP session `id` is open. */
  has(id: string): boolean
  /** Close every MCP session and its isoagent session. */
  close(): Promise<void>
}

interface McpEntry {
  transport: WebStandardStreamableHTTPServerTransport
  server: Server
  session: Session
  lastUsed: number
  inFlight: number
  closed: boolean
}

type Timer = ReturnType<typeof setInterval> & { unref?: () => void }

/** An open SSE response (a GET stream, a streamed POST answer) counts as use until it ends. */
function holdWhileStreaming(entry: McpEntry, response: Response): Response {
  const body = response.body
  if (body === null || !(response.headers.get('content-type') ?? '').includes('text/event-stream'))
    return response
  entry.inFlight++
  let released = false
  const release = () => {
    if (released) return
    released = true
    entry.inFlight--
    entry.lastUsed = Date.now()
  }
  const reader = body.getReader()
  const held = new ReadableStream<Uint8Array>({
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

const jsonRpcError = (status: number, code: number, message: string, headers = {}) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  })

/**
 * The MCP Streamable HTTP endpoint (`POST`/`GET`/`DELETE /mcp`) over the SDK's Web-standard
 * transport. Each `initialize` starts an MCP session (id from `crypto.randomUUID()`, sent in
 * `mcp-session-id`) with its own isoagent session from `sessions`; later requests name it in
 * the header. `DELETE` or `idleMs` without requests closes both; an unknown or closed
 * session id is `404` (the client then starts over). Authentication is the caller's job.
 */
export function createMcpHandler<C = unknown>(options: McpHandlerOptions<C>): McpHandler<C> {
  const idleMs = options.idleMs ?? DEFAULT_MCP_IDLE_MS
  const maxSessions = options.maxSessions ?? DEFAULT_MCP_MAX_SESSIONS
  if (!(idleMs > 0)) throw new TypeError('idleMs must be a positive number')
  if (!Number.isInteger(maxSessions) || maxSessions < 1)
    throw new TypeError('maxSessions must be a positive integer')
  const entries = new Map<string, McpEntry>()
  let opening = 0
  let timer: Timer | undefined

  const finish = async (entry: McpEntry) => {
    if (entry.closed) return
    entry.closed = true
    for (const [id, e] of entries) if (e === entry) entries.delete(id)
    if (entries.size === 0 && timer !== undefined) {
      clearInterval(timer)
      timer = undefined
    }
    await entry.server.close().catch(() => undefined)
    await options.sessions.close(entry.session).catch(() => undefined)
    const id = entry.transport.sessionId
    if (id !== undefined) await Promise.resolve(options.onSessionClosed?.(id)).catch(() => {})
  }
  const sweep = () => {
    const now = Date.now()
    for (const entry of entries.values())
      if (
        entry.inFlight === 0 &&
        entry.session.activeTools().length === 0 &&
        now - entry.lastUsed >= idleMs
      )
        void finish(entry)
  }
  const startTimer = () => {
    if (timer !== undefined) return
    timer = setInterval(sweep, Math.min(60_000, Math.max(50, idleMs / 2))) as Timer
    timer.unref?.()
  }

  const use = async (entry: McpEntry, request: Request, parsedBody?: unknown) => {
    entry.inFlight++
    entry.lastUsed = Date.now()
    try {
      return holdWhileStreaming(
        entry,
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
  const open = async (request: Request, context: C): Promise<Response> => {
    // Only an `initialize` opens a session; anything else without a session id is refused
    // before a workspace is touched.
    let body: unknown
    try {
      const read = await readRequestBody(request, maxBody)
      if (read.tooLarge) return jsonRpcError(413, -32000, 'Payload Too Large')
      body = JSON.parse(read.text)
    } catch {
      return jsonRpcError(400, -32700, 'Parse error: Invalid JSON')
    }
    if (!isInitializeRequest(body))
      return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required')
    if (entries.size + opening >= maxSessions)
      return jsonRpcError(429, -32000, 'too many MCP sessions', { 'retry-after': '1' })
    // The slot stays taken until the session is in `entries` (or given up), so a burst of
    // initializes cannot open more sessions than the cap.
    opening++
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
      const server = createMcpServer(session, options)
      const entry: McpEntry = {
        session,
        server,
        transport: new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: options.newSessionId
            ? () => options.newSessionId!(request)
            : () => crypto.randomUUID(),
          onsessioninitialized: (id) => {
            entries.set(id, entry)
            startTimer()
          },
          onsessionclosed: () => finish(entry),
          ...(options.maxRequestBodySize !== undefined
            ? { maxRequestBodySize: options.maxRequestBodySize }
            : {}),
        }),
        lastUsed: Date.now(),
        inFlight: 0,
        closed: false,
      }
      try {
        await server.connect(entry.transport)
      } catch (error) {
        await finish(entry)
        throw error
      }
      const response = await use(entry, request, body)
      if (entry.transport.sessionId === undefined) await finish(entry)
      return response
    } finally {
      opening--
    }
  }

  return {
    async handle(request, context) {
      sweep()
      const id = request.headers.get('mcp-session-id')
      if (id === null) {
        if (request.method !== 'POST')
          return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required')
        return open(request, context as C)
      }
      const entry = entries.get(id)
      if (entry === undefined || entry.closed) return jsonRpcError(404, -32001, 'Session not found')
      return use(entry, request)
    },
    get size() {
      return entries.size
    },
    has(id) {
      const entry = entries.get(id)
      return entry !== undefined && !entry.closed
    },
    async close() {
      await Promise.all([...new Set(entries.values())].map(finish))
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
