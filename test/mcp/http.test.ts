import type { AddressInfo } from 'node:net'
import { serve, type ServerType } from '@hono/node-server'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { Hono, type Context } from 'hono'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  Agent,
  IsoagentError,
  memoryWorkspace,
  type Session,
  type SessionOptions,
} from '../../adapters/index.ts'
import {
  agentMcpSessions,
  mountMcp,
  type McpHandler,
  type McpSessions,
} from '../../edge/mcp/index.ts'

const TOKEN = 'test-token'
const files = { 'a.txt': 'alpha\nbeta\n' }

/** Sessions over a fresh memory workspace each, remembering what was opened and closed. */
function recording(options: SessionOptions = {}) {
  const opened: Session[] = []
  const closed: Session[] = []
  const contexts: Context[] = []
  const inner = agentMcpSessions({ workspace: () => memoryWorkspace(files), session: options })
  const sessions: McpSessions = {
    async create(request, context) {
      contexts.push(context as Context)
      const session = await inner.create(request, context)
      opened.push(session)
      return session
    },
    async close(session) {
      closed.push(session)
      await inner.close(session)
    },
  }
  return { sessions, opened, closed, contexts }
}

interface Served {
  url: URL
  handler: McpHandler
  stop(): Promise<void>
}

/** A minimal Hono app: bearer token middleware, then the MCP endpoint, on a loopback port. */
async function serveMcp(options: Parameters<typeof mountMcp>[1]): Promise<Served> {
  const app = new Hono()
  app.use('/mcp', async (c, next) => {
    if (c.req.header('authorization') !== `Bearer ${TOKEN}`) return c.json({ error: 'no' }, 401)
    await next()
  })
  const handler = mountMcp(app, options)
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s))
  })
  const { port } = server.address() as AddressInfo
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    handler,
    async stop() {
      await handler.close()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

const clients: Client[] = []
async function connect(
  url: URL,
  capabilities: ConstructorParameters<typeof Client>[1] = {},
  fetchImpl?: typeof fetch,
) {
  const client = new Client({ name: 'isoagent-test', version: '0.0.0' }, capabilities)
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  })
  await client.connect(transport)
  clients.push(client)
  return { client, transport }
}
/** A client that never opens the standalone GET stream (405 there is accepted by the SDK). */
const withoutGetStream: typeof fetch = async (input, init) =>
  (init?.method ?? 'GET') === 'GET' ? new Response(null, { status: 405 }) : fetch(input, init)
const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult
const text = (result: CallToolResult) =>
  result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)))
})

describe('MCP over Streamable HTTP (Hono on @hono/node-server)', () => {
  const rec = recording({ budget: { maxToolCalls: 4 } })
  let served: Served
  beforeAll(async () => {
    served = await serveMcp({ sessions: rec.sessions })
  })
  afterAll(() => served.stop())

  it('lists the tools a memory workspace serves (no bash) and calls them', async () => {
    const { client } = await connect(served.url)
    const { tools } = await client.listTools()
    const expected = await Agent.create().session(memoryWorkspace())
    expect(tools.map((t) => t.name)).toEqual(expected.toolNames())
    await expected.close()
    expect(tools.map((t) => t.name)).not.toContain('bash')
    expect(tools.map((t) => t.name)).toContain('write')

    const wrote = await call(client, 'write', { file_path: 'b.txt', content: 'bee\n' })
    expect(wrote.isError).toBe(false)
    const read = await call(client, 'read', { file_path: 'b.txt' })
    expect(text(read)).toBe('     1\tbee')
    const missing = await call(client, 'read', { file_path: 'missing.txt' })
    expect(missing).toMatchObject({
      isError: true,
      structuredContent: { errorKind: { type: 'not_found' } },
    })
    const bash = await call(client, 'bash', { command: 'echo hi' })
    expect(bash.isError).toBe(true)
    expect(bash.structuredContent).toHaveProperty('errorKind.type')
  })

  it('gives each MCP session its own isoagent session; DELETE closes one, not the other', async () => {
    const before = rec.opened.length
    const a = await connect(served.url)
    const b = await connect(served.url)
    expect(a.transport.sessionId).toBeDefined()
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId)
    expect(rec.opened.length).toBe(before + 2)
    // The Hono context of the initialize request reaches sessions.create.
    expect(rec.contexts.at(-1)!.req.header('authorization')).toBe(`Bearer ${TOKEN}`)
    const [sa, sb] = rec.opened.slice(before)

    await call(a.client, 'write', { file_path: 'only-a.txt', content: 'a\n' })
    const seen = await call(b.client, 'read', { file_path: 'only-a.txt' })
    expect(seen).toMatchObject({
      isError: true,
      structuredContent: { errorKind: { type: 'not_found' } },
    })
    // Budgets are per session: A spends its four calls; B still has its own.
    for (let i = 0; i < 3; i++) await call(a.client, 'ls', {})
    const over = await call(a.client, 'ls', {})
    expect(over).toMatchObject({
      isError: true,
      structuredContent: { errorKind: { type: 'permission_denied' } },
    })
    expect(text(over)).toMatch(/refused/)
    expect((await call(b.client, 'ls', {})).isError).toBe(false)

    const id = a.transport.sessionId!
    await a.transport.terminateSession()
    expect(rec.closed).toContain(sa)
    expect(rec.closed).not.toContain(sb)
    const after = await fetch(served.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': id,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    })
    expect(after.status).toBe(404)
    expect(await after.json()).toMatchObject({ error: { code: -32001 } })
    expect((await call(b.client, 'read', { file_path: 'a.txt' })).isError).toBe(false)
  })

  it('needs the bearer token (the app middleware runs first)', async () => {
    const response = await fetch(served.url, { method: 'POST', body: '{}' })
    expect(response.status).toBe(401)
  })

  it('refuses requests without a session id that are not initialize, opening no session', async () => {
    const before = rec.opened.length
    const headers = {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    }
    const list = await fetch(served.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(list.status).toBe(400)
    const junk = await fetch(served.url, { method: 'POST', headers, body: '{not json' })
    expect(junk.status).toBe(400)
    expect(await junk.json()).toMatchObject({ error: { code: -32700 } })
    const get = await fetch(served.url, { headers })
    expect(get.status).toBe(400)
    const unknown = await fetch(served.url, {
      method: 'DELETE',
      headers: { ...headers, 'mcp-session-id': 'nope' },
    })
    expect(unknown.status).toBe(404)
    expect(rec.opened.length).toBe(before)
  })
})

describe('MCP sessions: idle, limits, cancellation, confirmations', () => {
  it('closes an idle MCP session and its isoagent session; then 404', async () => {
    const rec = recording()
    // 600 ms: a loaded machine can take over 100 ms between the client's first requests.
    const served = await serveMcp({ sessions: rec.sessions, idleMs: 600 })
    try {
      const { client } = await connect(served.url, {}, withoutGetStream)
      await client.listTools()
      expect(served.handler.size).toBe(1)
      await new Promise((r) => setTimeout(r, 1500))
      expect(served.handler.size).toBe(0)
      expect(rec.closed).toEqual(rec.opened)
      await expect(client.listTools()).rejects.toThrow(/404|not found/i)
    } finally {
      await served.stop()
    }
  })

  it('answers 503 with the reason when the workspace cannot be opened', async () => {
    const served = await serveMcp({
      sessions: {
        create: () => Promise.reject(new IsoagentError('not_found', 'bucket gone')),
        close: () => Promise.resolve(),
      },
    })
    try {
      await expect(connect(served.url)).rejects.toThrow(/bucket gone/)
      expect(served.handler.size).toBe(0)
    } finally {
      await served.stop()
    }
  })

  it('takes new session ids from newSessionId', async () => {
    const rec = recording()
    let n = 0
    const served = await serveMcp({
      sessions: rec.sessions,
      newSessionId: (request) => `${new URL(request.url).pathname.slice(1)}-${++n}`,
    })
    try {
      const { client, transport } = await connect(served.url)
      expect(transport.sessionId).toBe('mcp-1')
      expect((await client.listTools()).tools.length).toBeGreaterThan(0)
    } finally {
      await served.stop()
    }
  })

  it('answers 429 past maxSessions', async () => {
    const rec = recording()
    const served = await serveMcp({ sessions: rec.sessions, maxSessions: 1 })
    try {
      await connect(served.url)
      await expect(connect(served.url)).rejects.toThrow(/429|too many/i)
      expect(rec.opened.length).toBe(1)
    } finally {
      await served.stop()
    }
  })

  it('a burst of initializes opens no more sessions than maxSessions', async () => {
    const rec = recording()
    const served = await serveMcp({ sessions: rec.sessions, maxSessions: 2 })
    try {
      const results = await Promise.allSettled(Array.from({ length: 6 }, () => connect(served.url)))
      expect(results.filter((r) => r.status === 'fulfilled').length).toBe(2)
      expect(served.handler.size).toBe(2)
      expect(rec.opened.length).toBe(2)
    } finally {
      await served.stop()
    }
  })

  it('a cancelled request aborts the governed call', async () => {
    let aborted = false
    const rec = recording({
      tools: [
        {
          name: 'wait',
          description: 'Waits until cancelled.',
          parameters: { type: 'object', properties: {}, additionalProperties: false },
          run: (_args, runtime) =>
            new Promise<string>((resolve) =>
              runtime.signal.addEventListener('abort', () => {
                aborted = true
                resolve('stopped')
              }),
            ),
        },
      ],
    })
    const served = await serveMcp({ sessions: rec.sessions })
    try {
      const { client } = await connect(served.url)
      const controller = new AbortController()
      const pending = client.callTool({ name: 'wait', arguments: {} }, undefined, {
        signal: controller.signal,
      })
      const session = rec.opened[0]!
      await expect.poll(() => session.activeTools().length).toBe(1)
      controller.abort()
      await expect(pending).rejects.toThrow()
      await expect.poll(() => aborted).toBe(true)
      await expect.poll(() => session.activeTools().length).toBe(0)
    } finally {
      await served.stop()
    }
  })

  it('asks the client through elicitation when a rule asks, and refuses without it', async () => {
    const rec = recording({ permissions: { ask: ['write'] } })
    const served = await serveMcp({ sessions: rec.sessions })
    try {
      const answers = [true, false]
      const asked: string[] = []
      const { client } = await connect(served.url, { capabilities: { elicitation: {} } })
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params.message)
        return { action: 'accept', content: { approve: answers.shift()! } }
      })
      const approved = await call(client, 'write', {
        file_path: 'ok.txt',
        content: 'y'.repeat(10_000),
      })
      expect(approved.isError).toBe(false)
      expect(asked[0]).toMatch(/^Allow write \{"file_path":"ok\.txt","content":"yyy/)
      expect(asked[0]!.length).toBeLessThan(500)
      const refused = await call(client, 'write', { file_path: 'no.txt', content: 'n\n' })
      expect(refused).toMatchObject({
        isError: true,
        structuredContent: {
          errorKind: { type: 'permission_denied', reason: 'confirmation_refused' },
        },
      })
      expect(text(refused)).toContain('refused by the user')
      expect((await call(client, 'read', { file_path: 'ok.txt' })).isError).toBe(false)

      // A client that cannot be asked: nobody refused, and the result says what happened.
      const plain = await connect(served.url)
      const noWay = await call(plain.client, 'write', { file_path: 'x.txt', content: 'x' })
      expect(noWay).toMatchObject({
        isError: true,
        structuredContent: {
          errorKind: { type: 'permission_denied', reason: 'confirmation_unavailable' },
        },
      })
      expect(text(noWay)).not.toContain('refused by the user')
      expect(text(noWay)).toContain('did not declare the elicitation capability')
      expect(text(noWay)).toContain('the ask rule "write"')
    } finally {
      await served.stop()
    }
  })

  it("says a confirmation was not asked when the server answers them with 'refuse'", async () => {
    const rec = recording({ permissions: { ask: ['write'] } })
    const served = await serveMcp({ sessions: rec.sessions, confirmations: 'refuse' })
    try {
      let asked = 0
      const { client } = await connect(served.url, { capabilities: { elicitation: {} } })
      client.setRequestHandler(ElicitRequestSchema, () => {
        asked++
        return { action: 'accept', content: { approve: true } }
      })
      const result = await call(client, 'write', { file_path: 'x.txt', content: 'x' })
      expect(asked).toBe(0)
      expect(result).toMatchObject({
        isError: true,
        structuredContent: {
          errorKind: { type: 'permission_denied', reason: 'confirmation_unavailable' },
        },
      })
      expect(text(result)).toContain("answers confirmations with 'refuse'")
      expect(text(result)).not.toContain('refused by the user')
    } finally {
      await served.stop()
    }
  })

  it('asks through the stream of the tools/call request when the client has no GET stream', async () => {
    const rec = recording({ permissions: { ask: ['write'] } })
    const served = await serveMcp({ sessions: rec.sessions })
    try {
      let gets = 0
      const { client } = await connect(
        served.url,
        { capabilities: { elicitation: {} } },
        (i, o) => {
          if ((o?.method ?? 'GET') === 'GET') gets++
          return withoutGetStream(i, o)
        },
      )
      const asked: string[] = []
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params.message)
        return { action: 'accept', content: { approve: true } }
      })
      const started = Date.now()
      const result = await call(client, 'write', { file_path: 'asked.txt', content: 'y\n' })
      expect(gets).toBeGreaterThan(0)
      expect(asked).toHaveLength(1)
      expect(result.isError).toBe(false)
      expect(Date.now() - started).toBeLessThan(10_000)
    } finally {
      await served.stop()
    }
  })

  it('keeps a session whose GET event stream is open from idling out', async () => {
    const rec = recording()
    const served = await serveMcp({ sessions: rec.sessions, idleMs: 150 })
    try {
      let getOpen = false
      const watching: typeof fetch = async (input, init) => {
        const response = await fetch(input, init)
        if ((init?.method ?? 'GET') === 'GET' && response.ok) getOpen = true
        return response
      }
      const { client } = await connect(served.url, {}, watching)
      await expect.poll(() => getOpen, { timeout: 5000 }).toBe(true)
      await new Promise((r) => setTimeout(r, 600))
      expect(rec.closed).toHaveLength(0)
      expect(served.handler.size).toBe(1)
      expect((await call(client, 'ls', { path: '.' })).isError).toBe(false)
    } finally {
      await served.stop()
    }
  })
})
