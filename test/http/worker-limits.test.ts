// ISOAGENT_MAX_SESSIONS counts the Worker's MCP sessions beside its API sessions.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildWorker, runWorker, type RunningWorker, type WorkerBundle } from './worker-bundle.ts'

const TOKEN = 'limits-token'
let bundle: WorkerBundle
let w: RunningWorker
beforeAll(async () => {
  bundle = await buildWorker()
  w = await runWorker(bundle, { ISOAGENT_TOKEN: TOKEN, ISOAGENT_MAX_SESSIONS: '2' })
}, 180_000)
afterAll(async () => {
  await w?.close()
  bundle?.remove()
})

const auth = { authorization: `Bearer ${TOKEN}` }
const openApiSession = () =>
  fetch(`${w.url}/v1/sessions`, { method: 'POST', headers: auth, body: '{}' })
async function mcpClient() {
  const client = new Client({ name: 'limits', version: '0.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${w.url}/mcp`), {
    requestInit: { headers: auth },
  })
  await client.connect(transport)
  return { client, transport }
}

describe('Worker session limit', () => {
  it('counts MCP sessions, refuses past the limit, and frees the slot when one ends', async () => {
    const api = await openApiSession()
    expect(api.status).toBe(201)
    const { id } = (await api.json()) as { id: string }
    const mcp = await mcpClient()
    expect((await mcp.client.listTools()).tools.length).toBeGreaterThan(0)

    const third = await openApiSession()
    expect(third.status).toBe(429)
    expect(((await third.json()) as { error: { code: string } }).error.code).toBe(
      'too_many_sessions',
    )
    await expect(mcpClient()).rejects.toThrow(/429|at most 2 sessions/)

    await mcp.transport.terminateSession()
    await mcp.client.close()
    const again = await openApiSession()
    expect(again.status).toBe(201)
    await again.body?.cancel()
    const del = await fetch(`${w.url}/v1/sessions/${id}`, { method: 'DELETE', headers: auth })
    expect(del.status).toBe(204)
  }, 60_000)
})
