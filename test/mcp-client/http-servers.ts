// Loopback MCP servers for the tests: Streamable HTTP (stateful, one transport per MCP
// session) and the legacy HTTP+SSE transport, each serving a fresh SDK server per session.
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'

type AnyServer = McpServer | Server

/** A running loopback server. */
export interface LoopbackMcp {
  url: string
  /** Every SDK server made so far (one per MCP session), newest last. */
  servers: AnyServer[]
  /** Authorization headers seen. */
  auth: string[]
  close(): Promise<void>
  /** Drop every MCP session and open socket (a server restart, as the client sees it). */
  restart(): Promise<void>
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  return text === '' ? undefined : JSON.parse(text)
}

async function listen(server: HttpServer): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/**
 * A Streamable HTTP MCP endpoint at `/mcp`. `requireToken`: 401 without that bearer token.
 * `cors`: answer preflights and let any origin call it (a page on another origin, in Chromium).
 */
export async function streamableServer(
  make: () => AnyServer,
  options: { requireToken?: string; cors?: boolean } = {},
): Promise<LoopbackMcp> {
  let sessions = new Map<string, StreamableHTTPServerTransport>()
  const servers: AnyServer[] = []
  const auth: string[] = []
  const http = createServer(async (req, res) => {
    if (options.cors) {
      res.setHeader('access-control-allow-origin', '*')
      res.setHeader('access-control-expose-headers', 'mcp-session-id, mcp-protocol-version')
      if (req.method === 'OPTIONS') {
        res
          .writeHead(204, {
            'access-control-allow-methods': 'GET, POST, DELETE',
            'access-control-allow-headers':
              'content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id',
            'access-control-max-age': '600',
          })
          .end()
        return
      }
    }
    auth.push(req.headers.authorization ?? '')
    if (options.requireToken && req.headers.authorization !== `Bearer ${options.requireToken}`) {
      res.writeHead(401).end('unauthorized')
      return
    }
    if (!req.url?.startsWith('/mcp')) return void res.writeHead(404).end()
    const id = req.headers['mcp-session-id']
    let transport = typeof id === 'string' ? sessions.get(id) : undefined
    if (transport === undefined) {
      if (typeof id === 'string' || req.method !== 'POST') {
        res.writeHead(404).end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32001, message: 'Session not found' },
            id: null,
          }),
        )
        return
      }
      const map = sessions
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void map.set(sid, transport!),
      })
      const server = make()
      servers.push(server)
      await server.connect(transport)
    }
    const body = req.method === 'POST' ? await readBody(req) : undefined
    await transport.handleRequest(req, res, body)
  })
  const url = `${await listen(http)}/mcp`
  return {
    url,
    servers,
    auth,
    async close() {
      http.closeAllConnections()
      await new Promise((r) => http.close(r))
    },
    async restart() {
      const old = sessions
      sessions = new Map()
      await Promise.allSettled([...old.values()].map((t) => t.close()))
      http.closeAllConnections()
    },
  }
}

/** A legacy HTTP+SSE MCP server: `GET /sse` opens the stream, `POST /messages` carries requests. */
export async function legacySseServer(make: () => AnyServer): Promise<LoopbackMcp> {
  const sessions = new Map<string, SSEServerTransport>()
  const servers: AnyServer[] = []
  const http = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res)
      sessions.set(transport.sessionId, transport)
      const server = make()
      servers.push(server)
      await server.connect(transport)
      return
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      const transport = sessions.get(url.searchParams.get('sessionId') ?? '')
      if (transport === undefined) return void res.writeHead(404).end()
      await transport.handlePostMessage(req, res, await readBody(req))
      return
    }
    res.writeHead(405).end('method not allowed')
  })
  const url = `${await listen(http)}/sse`
  return {
    url,
    servers,
    auth: [],
    async close() {
      http.closeAllConnections()
      await new Promise((r) => http.close(r))
    },
    async restart() {
      http.closeAllConnections()
    },
  }
}
