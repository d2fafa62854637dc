import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  CallToolResultSchema,
  ToolListChangedNotificationSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker'
import { IsoagentError } from '../errors.ts'
import { MCP_DEFAULT_TIMEOUT_MS, type McpServerConfig } from './mcp-config.ts'
import { mcpError } from './mcp-errors.ts'
import { MCP_MAX_TOOLS_PER_SERVER } from './mcp-tool-names.ts'
import {
  accessToken,
  discoveryAuth,
  httpHeaders,
  stdioTransport,
  type McpFetch,
} from './mcp-transports.ts'

import { MCP_MAX_LIST_PAGES, MCP_RECONNECT_DELAYS_MS } from './mcp-limits.ts'
import { timeoutSignal } from '../net/timeout-signal.ts'
import { trackSends, watchedFetch, type TrackedTransport } from './watched-transport.ts'

/** A listed tool set, and what was left out of it. */
export interface McpToolList {
  tools: Tool[]
  /** Why some tools are not offered (over the per-server limit, a looping cursor). */
  notes: string[]
}

/** What a connection tells its owner. */
export interface McpConnectionEvents {
  /** A new tool list (after connect, `list_changed` or a reconnect). */
  onTools(list: McpToolList): void
  /** The connection state changed (status readers look again). */
  onState(): void
  /** A credential obtained while connecting (a client-credentials grant's token): redact it. */
  onSecret?(secret: string): void
}

const CLIENT_INFO = { name: 'isoagent', version: '1' }
/** How long closing waits for messages on their way (cancellations) and the session's DELETE. */
const CLOSE_FLUSH_MS = 1000
/** Pause before a call's second connect attempt. */
const CALL_RECONNECT_PAUSE_MS = 150

/**
 * One MCP server of a session: an SDK `Client` over stdio or HTTP (Streamable HTTP first, the
 * legacy HTTP+SSE transport when the server does not speak it). Follows `tools/list` pages,
 * re-lists on `notifications/tools/list_changed`, and after a dropped HTTP connection
 * reconnects with backoff ({@link MCP_RECONNECT_DELAYS_MS}).
 */
export class McpConnection {
  readonly name: string
  readonly config: McpServerConfig
  readonly timeoutMs: number
  private client: Client | undefined
  private connecting: Promise<void> | undefined
  private closed = false
  private retryTimer: ReturnType<typeof setTimeout> | undefined
  private attempts = 0
  private readonly transports = new WeakMap<Client, TrackedTransport>()
  /** The last failure (connect, list, a dropped transport); cleared by a good connect. */
  lastError: string | undefined
  /** Which HTTP transport answered (`streamable-http` or `sse`), or `stdio`. */
  via: 'stdio' | 'streamable-http' | 'sse' | undefined

  constructor(
    name: string,
    config: McpServerConfig,
    private readonly fetchFn: McpFetch,
    private readonly events: McpConnectionEvents,
  ) {
    this.name = name
    this.config = config
    this.timeoutMs = config.toolTimeoutMs ?? MCP_DEFAULT_TIMEOUT_MS
  }

  get connected(): boolean {
    return this.client !== undefined
  }

  /** Connect and list the tools. Throws a typed `IsoagentError` (nothing is kept on failure). */
  connect(): Promise<void> {
    if (this.closed) return Promise.reject(new IsoagentError('cancelled', 'the server was removed'))
    this.connecting ??= this.open().finally(() => (this.connecting = undefined))
    return this.connecting
  }

  private async open(): Promise<void> {
    const signal = timeoutSignal(this.timeoutMs)
    try {
      const client = await this.handshake(signal)
      if (this.closed) {
        await client.close().catch(() => undefined)
        throw new IsoagentError('cancelled', 'the server was removed')
      }
      const list = await this.listTools(client)
      this.client = client
      this.attempts = 0
      this.lastError = undefined
      this.events.onTools(list)
      this.events.onState()
    } catch (error) {
      const typed = mcpError(error, `${this.name}: connect`, this.timeoutMs)
      this.lastError = typed.message
      this.events.onState()
      throw typed
    }
  }

  private async handshake(signal: AbortSignal): Promise<Client> {
    const config = this.config
    if (config.transport === 'stdio') {
      this.via = 'stdio'
      return this.start(stdioTransport(config), signal)
    }
    const token = await accessToken(config.oauth, this.fetchFn, signal)
    if (token !== undefined) this.events.onSecret?.(token)
    const url = new URL(config.url)
    const init = { headers: httpHeaders(config, token) }
    const authProvider = discoveryAuth(config.oauth, (secret) => this.events.onSecret?.(secret))
    try {
      // A response stream that ends unanswered (the server went away) drops the connection, so
      // open calls fail `transport` now instead of at their deadline.
      const owner: { client?: Client } = {}
      const fetch = watchedFetch(this.fetchFn, (why) => {
        if (owner.client !== undefined) this.dropped(owner.client, why)
      })
      const client = await this.start(
        new StreamableHTTPClientTransport(url, {
          requestInit: init,
          fetch,
          ...(authProvider ? { authProvider } : {}),
        }),
        signal,
      )
      owner.client = client
      this.via = 'streamable-http'
      return client
    } catch (error) {
      if (signal.aborted || !legacyCandidate(error)) throw error
    }
    const client = await this.start(
      new SSEClientTransport(url, {
        requestInit: init,
        fetch: this.fetchFn,
        ...(authProvider ? { authProvider } : {}),
        eventSourceInit: { fetch: sseFetch(this.fetchFn, init.headers) },
      }),
      signal,
    )
    this.via = 'sse'
    return client
  }

  private async start(transport: Transport, signal: AbortSignal): Promise<Client> {
    const client = new Client(CLIENT_INFO, {
      capabilities: {},
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    })
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (this.client === client) void this.relist(client)
    })
    client.onclose = () => this.dropped(client, 'the connection closed')
    client.onerror = (error) => {
      this.lastError = `${this.name}: ${error.message}`
    }
    const tracked = trackSends(transport)
    this.transports.set(client, tracked)
    try {
      await client.connect(transport, { signal, timeout: this.timeoutMs })
    } catch (error) {
      client.onclose = undefined
      await client.close().catch(() => undefined)
      throw error
    }
    return client
  }

  /** Every page of `tools/list`, at most {@link MCP_MAX_TOOLS_PER_SERVER} tools. */
  private async listTools(client: Client): Promise<McpToolList> {
    const tools: Tool[] = []
    const notes: string[] = []
    const seen = new Set<string>()
    let cursor: string | undefined
    let total = 0
    for (let page = 0; ; page++) {
      if (page >= MCP_MAX_LIST_PAGES) {
        notes.push(`tools/list: stopped after ${MCP_MAX_LIST_PAGES} pages`)
        break
      }
      const answer = await client.listTools(cursor === undefined ? {} : { cursor }, {
        timeout: this.timeoutMs,
      })
      total += answer.tools.length
      for (const tool of answer.tools) if (tools.length < MCP_MAX_TOOLS_PER_SERVER) tools.push(tool)
      cursor = answer.nextCursor
      if (cursor === undefined) break
      if (seen.has(cursor)) {
        notes.push('tools/list: the server repeated a cursor; stopped there')
        break
      }
      seen.add(cursor)
    }
    if (total > MCP_MAX_TOOLS_PER_SERVER)
      notes.push(
        `the server lists ${total} tools; only the first ${MCP_MAX_TOOLS_PER_SERVER} are offered`,
      )
    return { tools, notes }
  }

  private async relist(client: Client): Promise<void> {
    try {
      const list = await this.listTools(client)
      if (this.client === client) this.events.onTools(list)
    } catch (error) {
      this.lastError = mcpError(error, `${this.name}: tools/list`, this.timeoutMs).message
      this.events.onState()
    }
  }

  /** Call `tool` with `args`; the SDK sends `notifications/cancelled` when `signal` aborts. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal) {
    let client = this.client
    if (client === undefined) {
      if (this.closed || this.config.transport !== 'http')
        throw new IsoagentError('transport', `MCP server ${this.name} is not connected`)
      await this.connectForCall(signal).catch((error: unknown) => {
        throw new IsoagentError(
          'transport',
          `MCP server ${this.name} is not connected: ${mcpError(error, 'connect', this.timeoutMs).message}`,
        )
      })
      client = this.client
      if (client === undefined)
        throw new IsoagentError('transport', `MCP server ${this.name} is not connected`)
    }
    try {
      return await client.callTool({ name: tool, arguments: args }, CallToolResultSchema, {
        signal,
        timeout: this.timeoutMs,
      })
    } catch (error) {
      const typed = mcpError(error, `${this.name}/${tool}`, this.timeoutMs, signal)
      if (typed.code === 'transport' && this.config.transport === 'http') {
        this.lastError = typed.message
        this.dropped(client, typed.message)
      }
      throw typed
    }
  }

  /**
   * Connect for a call that found no connection. A transport failure is tried once more after a
   * short pause: right after a server restart the first request may meet a pooled socket the
   * server has just closed.
   */
  private async connectForCall(signal: AbortSignal): Promise<void> {
    try {
      await this.connect()
    } catch (error) {
      if (!IsoagentError.is(error) || error.code !== 'transport' || signal.aborted) throw error
      await new Promise((resolve) => setTimeout(resolve, CALL_RECONNECT_PAUSE_MS))
      if (this.client === undefined) await this.connect()
    }
  }

  /**
   * The connection of `client` is gone. HTTP: its tools stay offered (a call meanwhile tries to
   * connect once, else fails `transport`) and it reconnects with backoff. stdio: the server has
   * exited, so its tools leave the session.
   */
  private dropped(client: Client, why: string): void {
    if (this.client !== client) return
    this.client = undefined
    client.onclose = undefined
    void client.close().catch(() => undefined)
    if (this.closed) return
    if (this.config.transport === 'http') {
      this.lastError ??= `${this.name}: ${why}`
      this.events.onState()
      this.scheduleReconnect()
      return
    }
    this.lastError ??= `${this.name}: ${why}`
    this.events.onTools({ tools: [], notes: [] })
    this.events.onState()
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer !== undefined) return
    const delays = MCP_RECONNECT_DELAYS_MS
    const delay = delays[Math.min(this.attempts, delays.length - 1)]!
    this.attempts++
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined
      if (this.closed || this.client !== undefined) return
      this.connect().catch(() => this.scheduleReconnect())
    }, delay)
  }

  /** Close the connection for good (stdio: the server's process group is killed). */
  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.retryTimer)
    await this.connecting?.catch(() => undefined)
    const client = this.client
    this.client = undefined
    if (client !== undefined) {
      client.onclose = undefined
      await this.farewell(client)
      await client.close().catch(() => undefined)
    }
  }

  /**
   * Before closing: let messages on their way go out (the `notifications/cancelled` of calls the
   * session's close aborted), and end a Streamable HTTP session with its DELETE; bounded.
   */
  private async farewell(client: Client): Promise<void> {
    const tracked = this.transports.get(client)
    if (tracked === undefined) return
    await tracked.flushed(CLOSE_FLUSH_MS)
    const transport = tracked.transport
    if (!(transport instanceof StreamableHTTPClientTransport)) return
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([
      transport.terminateSession().catch(() => undefined),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_FLUSH_MS))),
    ])
    clearTimeout(timer)
  }
}

/** Whether a failed Streamable HTTP handshake may be a legacy HTTP+SSE server (a 4xx answer). */
function legacyCandidate(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'number' && code >= 400 && code < 500 && code !== 401 && code !== 403
}

/** The EventSource fetch of the legacy transport: the same fetch, with the configured headers. */
function sseFetch(fetchFn: McpFetch, headers: Record<string, string>): McpFetch {
  return (url, init) => {
    const merged = new Headers(init?.headers)
    for (const [k, v] of Object.entries(headers)) merged.set(k, v)
    return fetchFn(url, { ...init, headers: merged })
  }
}
