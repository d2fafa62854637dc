// Issue 27 "Session limits": API and MCP sessions share one pool of `maxSessions` on Node, a 429
// says when a slot frees by idle time, and an MCP session nobody DELETEs ends by idle time.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterEach, describe, expect, it } from 'vitest'
import { memoryWorkspace } from '../../adapters/index.ts'
import { createApp, type IsoagentApp } from '../../edge/index.ts'
import { serve, type ServerHandle } from '../../edge/node.ts'

const TOKEN = 'limits-token'
const auth = { authorization: `Bearer ${TOKEN}` }
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'limits-test', version: '0' },
  },
}

let running: { app: IsoagentApp; handle: ServerHandle } | undefined
afterEach(async () => {
  await running?.handle.close()
  running = undefined
})

async function start(maxSessions: number, sessionIdleMs: number) {
  const app = createApp({
    workspace: () => memoryWorkspace({ 'a.txt': 'a\n' }),
    token: TOKEN,
    maxSessions,
    sessionIdleMs,
  })
  const handle = await serve(app, { port: 0, handleSignals: false })
  running = { app, handle }
  return { app, url: handle.url }
}

const openRest = (url: string) => fetch(`${url}/v1/sessions`, { method: 'POST', headers: auth })
const initializeMcp = (url: string) =>
  fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      ...auth,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(INITIALIZE),
  })

describe('session limits (Node)', () => {
  it('counts API and MCP sessions in one pool of maxSessions', async () => {
    const { app, url } = await start(2, 60_000)
    expect((await openRest(url)).status).toBe(201)
    const mcp = await initializeMcp(url)
    expect(mcp.status).toBe(200)
    expect(mcp.headers.get('mcp-session-id')).toBeTruthy()
    await mcp.body?.cancel()
    expect(app.context.store.size + app.mcp!.size).toBe(2)
    // Both kinds are refused once the shared pool is full.
    const rest = await openRest(url)
    expect(rest.status).toBe(429)
    expect(((await rest.json()) as { error: { code: string } }).error.code).toBe(
      'too_many_sessions',
    )
    const refused = await initializeMcp(url)
    expect(refused.status).toBe(429)
    await refused.body?.cancel()
  })

  it('says in Retry-After when a held session idles out, for MCP and the API', async () => {
    const { url } = await start(1, 40_000)
    const first = await initializeMcp(url)
    expect(first.status).toBe(200)
    await first.body?.cancel()
    await new Promise((r) => setTimeout(r, 2100))
    for (const refused of [await initializeMcp(url), await openRest(url)]) {
      expect(refused.status).toBe(429)
      await refused.body?.cancel()
      // 40 s of idle time, about 2 s of it gone: the slot frees in 37–38 s, not "1".
      const seconds = Number(refused.headers.get('retry-after'))
      expect(seconds).toBeGreaterThanOrEqual(36)
      expect(seconds).toBeLessThanOrEqual(38)
    }
  })

  it('ends an MCP session the client never DELETEs by idle time, freeing its slot', async () => {
    const { app, url } = await start(1, 800)
    const client = new Client({ name: 'limits-test', version: '0' })
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: auth },
    })
    await client.connect(transport)
    expect((await client.listTools()).tools.length).toBeGreaterThan(0)
    expect(app.mcp!.size).toBe(1)
    // The client goes away without DELETE: its GET stream closes, nothing else comes.
    await transport.close()
    await expect.poll(() => app.mcp!.size, { timeout: 5000, interval: 100 }).toBe(0)
    const after = await openRest(url)
    expect(after.status).toBe(201)
  })
})
