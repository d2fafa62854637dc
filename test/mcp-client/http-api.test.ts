// The HTTP API's MCP routes: GET/POST /v1/sessions/:id/mcp, DELETE /v1/sessions/:id/mcp/:name,
// the safe HTTP policy for URLs given over the network, and the OpenAPI document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryWorkspace } from '../../adapters/index.ts'
import { createApp } from '../../edge/http/app.ts'
import { streamableServer, type LoopbackMcp } from './http-servers.ts'
import { toolServer } from './fixtures/tool-server.mjs'

let mcp: LoopbackMcp
const token = 'mcp-api-token'
const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }

beforeAll(async () => {
  mcp = await streamableServer(() => toolServer())
})
afterAll(() => mcp?.close())

function app(allowHosts?: string[]) {
  return createApp({
    workspace: () => memoryWorkspace(),
    token,
    mcp: false,
    ...(allowHosts ? { session: { net: { allowHosts } } } : {}),
  })
}

async function newSession(a: ReturnType<typeof app>): Promise<string> {
  const res = await a.fetch(
    new Request('http://127.0.0.1/v1/sessions', { method: 'POST', headers: auth }),
  )
  return ((await res.json()) as { id: string }).id
}

const post = (a: ReturnType<typeof app>, id: string, body: unknown) =>
  a.fetch(
    new Request(`http://127.0.0.1/v1/sessions/${id}/mcp`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify(body),
    }),
  )

describe('HTTP API: MCP servers of a session', () => {
  it('adds an allowed HTTP server, lists it, calls its tool, removes it', async () => {
    const a = app([new URL(mcp.url).host])
    try {
      const id = await newSession(a)
      const added = await post(a, id, {
        name: 'remote',
        config: { transport: 'http', url: mcp.url },
      })
      expect(added.status).toBe(200)
      const body = (await added.json()) as { name: string; tools: string[] }
      expect(body.tools).toContain('mcp__remote__echo')
      const status = await a.fetch(
        new Request(`http://127.0.0.1/v1/sessions/${id}/mcp`, { headers: auth }),
      )
      expect(await status.json()).toEqual([
        expect.objectContaining({ name: 'remote', connected: true, transport: 'http' }),
      ])
      // The API's tool route is the governed path: a read-only closed-world tool runs at once.
      const call = await a.fetch(
        new Request(`http://127.0.0.1/v1/sessions/${id}/tools/mcp__remote__peek`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ args: { key: 'api' } }),
        }),
      )
      expect(((await call.json()) as { output: string }).output).toBe('value of api')
      const del = () =>
        a.fetch(
          new Request(`http://127.0.0.1/v1/sessions/${id}/mcp/remote`, {
            method: 'DELETE',
            headers: auth,
          }),
        )
      expect((await del()).status).toBe(204)
      expect((await del()).status).toBe(404)
    } finally {
      await a.close()
    }
  })

  it('refuses a loopback URL without net.allowHosts (422, nothing added), and stdio (400)', async () => {
    const a = app()
    try {
      const id = await newSession(a)
      const refused = await post(a, id, {
        name: 'priv',
        config: { transport: 'http', url: mcp.url },
      })
      expect(refused.status).toBe(422)
      expect(await refused.json()).toMatchObject({
        error: { code: 'mcp_connect_failed', message: expect.stringMatching(/permission_denied/) },
      })
      const stdio = await post(a, id, {
        name: 'local',
        config: { transport: 'stdio', command: 'sh' },
      })
      expect(stdio.status).toBe(400)
      for (const bad of [
        { name: 'a__b', config: { transport: 'http', url: mcp.url } },
        { name: 'ok', config: { transport: 'http', url: 'ftp://x' } },
        { name: 'ok', config: { transport: 'http', url: mcp.url, extra: 1 } },
        { name: 'ok' },
        { name: 'ok', config: {}, more: true },
      ]) {
        const res = await post(a, id, bad)
        expect(res.status, JSON.stringify(bad)).toBe(400)
      }
      const status = await a.fetch(
        new Request(`http://127.0.0.1/v1/sessions/${id}/mcp`, { headers: auth }),
      )
      expect(
        ((await status.json()) as { toolCount: number }[]).every((s) => s.toolCount === 0),
      ).toBe(true)
    } finally {
      await a.close()
    }
  })

  it('the OpenAPI document has the three routes', async () => {
    const a = app()
    try {
      const res = await a.fetch(new Request('http://127.0.0.1/v1/openapi.json', { headers: auth }))
      const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> }
      expect(Object.keys(doc.paths['/v1/sessions/{id}/mcp'] ?? {})).toEqual(
        expect.arrayContaining(['get', 'post']),
      )
      expect(Object.keys(doc.paths['/v1/sessions/{id}/mcp/{name}'] ?? {})).toContain('delete')
    } finally {
      await a.close()
    }
  })
})
