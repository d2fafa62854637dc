import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  readRequestBody,
} from '@modelcontextprotocol/sdk/server/requestBody.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker'
import {
  Agent,
  IsoagentError,
  type Session,
  type SessionOptions,
  type ToolResult,
  type WorkspaceServices,
} from '../adapters/index.ts'
import { VERSION } from './version.ts'

/** Name and version the MCP server reports in `initialize`. */
export interface McpServerInfo {
  name: string
  version: string
}

/** Default {@link McpServerInfo}. */
export const MCP_SERVER_INFO: McpServerInfo = { name: 'isoagent', version: VERSION }

/**
 * What happens to a call that a permission rule (or the tool itself) `ask`s about:
 * `'elicit'` asks the MCP client through `elicitation/create` when it declared that capability
 * and refuses otherwise; `'refuse'` refuses at once; `'wait'` leaves it pending for someone else
 * (e.g. the HTTP confirmations route) to answer.
 */
export type McpConfirmationMode = 'elicit' | 'refuse' | 'wait'

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  serverInfo?: McpServerInfo
  /** Default `'elicit'`. */
  confirmations?: McpConfirmationMode
}

/**
 * The MCP result of a tool result: the output as text content, `isError` from `exitCode`, and
 * `structuredContent` holding the metadata (plus `errorKind` when the call failed). No tool
 * declares an `outputSchema`, so `structuredContent` is free-form (it is always an object).
 */
export function toCallToolResult(result: ToolResult): CallToolResult {
  const failed = result.exitCode !== 0
  const mapped: CallToolResult = {
    content: [{ type: 'text', text: result.output }],
    isError: failed,
  }
  const structured: Record<string, unknown> = { ...(result.metadata ?? {}) }
  if (failed && result.errorKind !== undefined) structured.errorKind = result.errorKind
  if (Object.keys(structured).length > 0) mapped.structuredContent = structured
  return mapped
}

/** MCP tool definitions of the tools `session` serves (exactly `session.toolDefinitions()`). */
export function mcpTools(session: Session): Tool[] {
  return session.toolDefinitions().map((def) => ({
    name: def.name,
    description: def.description,
    inputSchema: def.parameters as Tool['inputSchema'],
  }))
}

/**
 * An MCP server (the SDK's low-level `Server`) over one isoagent session: `tools/list` lists
 * the tools the session's workspace serves; `tools/call` runs on the governed (model-side)
 * path, so the session's permissions, confirmations, hooks and budget apply, and the request's
 * cancellation aborts the call. Web-standard only: it runs in Node, workerd and browsers.
 * Closing the server does not close the session.
 */
export function createMcpServer(session: Session, options: McpServerOptions = {}): Server {
  const server = new Server(options.serverInfo ?? MCP_SERVER_INFO, {
    capabilities: { tools: {} },
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
  })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: mcpTools(session) }))
  const calls = new Set<OpenCall>()
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {}
    const open: OpenCall = {
      requestId: extra.requestId,
      toolName: request.params.name,
      args: JSON.stringify(args),
    }
    calls.add(open)
    try {
      const result = await session.governedTool(request.params.name, args, {
        signal: extra.signal,
      })
      return toCallToolResult(result)
    } finally {
      calls.delete(open)
    }
  })
  const mode = options.confirmations ?? 'elicit'
  if (mode !== 'wait') answerConfirmations(session, server, mode, calls)
  return server
}

const clip = (s: string, max = 400) => (s.length > max ? s.slice(0, max) + '…' : s)

/** A `tools/call` request being answered: an elicitation for its call goes on its stream. */
interface OpenCall {
  requestId: string | number
  toolName: string
  args: string
}

/** The open request a confirmation belongs to: same tool and arguments, else same tool. */
function requestOf(calls: Set<OpenCall>, toolName: string, args: unknown): OpenCall | undefined {
  let json: string | undefined
  try {
    json = JSON.stringify(args)
  } catch {
    json = undefined
  }
  let sameTool: OpenCall | undefined
  for (const call of calls) {
    if (call.toolName !== toolName) continue
    if (call.args === json) return call
    sameTool ??= call
  }
  return sameTool
}

/** An elicitation waits as long as the human takes (the session's own timeout still applies). */
const ELICITATION_TIMEOUT_MS = 2_147_483_647

function answerConfirmations(
  session: Session,
  server: Server,
  mode: 'elicit' | 'refuse',
  calls: Set<OpenCall>,
): void {
  const stop = new AbortController()
  const previous = server.onclose
  server.onclose = () => {
    stop.abort()
    previous?.()
  }
  const settle = (id: string, how: (id: string) => void) => {
    try {
      how(id)
    } catch {
      // answered elsewhere, timed out or cancelled meanwhile
    }
  }
  const answer = (id: string, approved: boolean) =>
    settle(id, (i) => session.confirmToolUse(i, approved))
  // Nobody was asked: say so instead of reporting a refusal nobody made.
  const unavailable = (id: string, why: string) => settle(id, (i) => session.cannotConfirm(i, why))
  const ask = async (id: string, toolName: string, args: unknown, reason?: string) => {
    if (mode === 'refuse')
      return unavailable(id, "this MCP server answers confirmations with 'refuse'")
    if (server.getClientCapabilities()?.elicitation === undefined)
      return unavailable(id, 'the MCP client did not declare the elicitation capability')
    const related = requestOf(calls, toolName, args)
    try {
      const reply = await server.elicitInput(
        {
          mode: 'form',
          message:
            `Allow ${toolName} ${clip(JSON.stringify(args))}?` +
            (reason !== undefined ? ` (${reason})` : ''),
          requestedSchema: {
            type: 'object',
            properties: { approve: { type: 'boolean', title: 'Approve this call' } },
            required: ['approve'],
          },
        },
        {
          signal: stop.signal,
          timeout: ELICITATION_TIMEOUT_MS,
          ...(related !== undefined ? { relatedRequestId: related.requestId } : {}),
        },
      )
      answer(id, reply.action === 'accept' && reply.content?.approve === true)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      unavailable(id, `the elicitation request failed: ${clip(message, 200)}`)
    }
  }
  void (async () => {
    for await (const event of session.events({ signal: stop.signal })) {
      if (event.type === 'confirmation_required')
        void ask(event.confirmationId, event.toolName, event.args, event.reason)
    }
  })().catch(() => undefined)
}

/**
 * Where the MCP endpoint gets its isoagent sessions: one per MCP session. An app that keeps its
 * own sessions (limits, idle sweeps, event history) implements this over its store.
 */
export interface McpSessions<C = unknown> {
  /**
   * Open the session of a new MCP session; `request` is its `initialize` request and `context`
   * what the caller passed to `handle` (e.g. the Hono context, whose `env` holds a Worker's
   * bindings). Throwing refuses the MCP session: a thrown `Response` is sent as is, anything
   * else becomes a `503` (with the message of an `IsoagentError`).
   */
  create(request: Request, context: C): Promise<Session>
  /** The MCP session ended (DELETE, idle or shutdown): release its session. */
  close(session: Session): Promise<void>
}

/** Options of {@link agentMcpSessions}. */
export interface AgentMcpSessionsOptions<C = unknown> {
  /** The workspace of a new session (called once per MCP session). */
  workspace: (request: Request, context: C) => WorkspaceServices | Promise<WorkspaceServices>
  /** Permissions, hooks, budget, ... of every session. */
  session?: SessionOptions
  /** Default `Agent.create()`. */
  agent?: Agent
}

/** {@link McpSessions} that open a fresh session of `agent` per MCP session and close it after. */
export function agentMcpSessions<C = unknown>(options: AgentMcpSessionsOptions<C>): McpSessions<C> {
  const agent = options.agent ?? Agent.create()
  return {
    async create(request, context) {
      return agent.session(await options.workspace(request, context), options.session ?? {})
    },
    close: (session) => session.close(),
  }
}

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
