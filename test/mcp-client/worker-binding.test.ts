// The Worker's `MCP_SERVERS` binding: the Worker as wrangler bundles it, in workerd (Miniflare),
// connects each session (in its own Durable Object) to the remote Streamable HTTP servers the
// binding names; here a real MCP SDK server on the host's loopback. A binding that does not
// parse, is too large or names a stdio server is a typed startup error (503 not_configured),
// never a crash.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildWorker, runWorker, type WorkerBundle } from '../http/worker-bundle.ts'
import { streamableServer, type LoopbackMcp } from './http-servers.ts'
import { toolServer } from './fixtures/tool-server.mjs'

const TOKEN = 'worker-mcp-binding-token'
const SECRET_HEADER = 'binding-header-secret-3141'
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
let bundle: WorkerBundle
let mcp: LoopbackMcp

beforeAll(async () => {
  ;[bundle, mcp] = await Promise.all([buildWorker(), streamableServer(() => toolServer())])
}, 240_000)
afterAll(async () => {
  await mcp?.close()
  bundle?.remove()
})

async function openSession(url: string): Promise<string> {
  const res = await fetch(`${url}/v1/sessions`, { method: 'POST', headers: auth, body: '{}' })
  expect(res.status).toBe(201)
  return ((await res.json()) as { id: string }).id
}

describe('Worker MCP_SERVERS binding', () => {
  it('every session gets the remote servers tools; credentials stay redacted', async () => {
    const w = await runWorker(bundle, {
      ISOAGENT_TOKEN: TOKEN,
      MCP_SERVERS: JSON.stringify({
        remote: {
          transport: 'http',
          url: mcp.url,
          headers: { 'X-Api-Key': SECRET_HEADER },
          toolTimeoutMs: 20_000,
        },
      }),
    })
    try {
      const [a, b] = [await openSession(w.url), await openSession(w.url)]
      for (const id of [a, b]) {
        const status = await fetch(`${w.url}/v1/sessions/${id}/mcp`, { headers: auth })
        expect(status.status).toBe(200)
        expect(await status.json()).toEqual([
          expect.objectContaining({ name: 'remote', connected: true, transport: 'http' }),
        ])
        const tools = await fetch(`${w.url}/v1/sessions/${id}/tools`, { headers: auth })
        const names = ((await tools.json()) as { name: string }[]).map((t) => t.name)
        expect(names).toEqual(expect.arrayContaining(['mcp__remote__echo', 'mcp__remote__peek']))
        // peek is read-only and closed-world: the governed path runs it without asking.
        const called = await fetch(`${w.url}/v1/sessions/${id}/tools/mcp__remote__peek`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ args: { key: `${id} ${SECRET_HEADER}` } }),
        })
        const result = (await called.json()) as { exitCode: number; output: string }
        expect(result).toMatchObject({ exitCode: 0, output: `value of ${id} [REDACTED]` })
      }
      // Two sessions, two MCP sessions on the server, each with the configured header.
      expect(mcp.servers.length).toBeGreaterThanOrEqual(2)
    } finally {
      await w.close()
    }
  }, 120_000)

  it('a bad binding is a typed 503, not a crash', async () => {
    const cases: [string, RegExp][] = [
      ['{ not json', /MCP_SERVERS.*not valid JSON/],
      [JSON.stringify({ s: { transport: 'stdio', command: 'sh' } }), /only HTTP servers/],
      [JSON.stringify({ 'bad name': { transport: 'http', url: mcp.url } }), /MCP server name/],
      [JSON.stringify({ s: { transport: 'http', url: 'ftp://x' } }), /http\(s\)/],
      [JSON.stringify(['x']), /record/],
      [
        JSON.stringify({ s: { transport: 'http', url: mcp.url, pad: 'x'.repeat(70_000) } }),
        /longer than/,
      ],
    ]
    for (const [binding, message] of cases) {
      const w = await runWorker(bundle, { ISOAGENT_TOKEN: TOKEN, MCP_SERVERS: binding })
      try {
        const res = await fetch(`${w.url}/v1/sessions`, {
          method: 'POST',
          headers: auth,
          body: '{}',
        })
        expect(res.status, binding.slice(0, 40)).toBe(503)
        const body = (await res.json()) as { error: { code: string; message: string } }
        expect(body.error.code).toBe('not_configured')
        expect(body.error.message).toMatch(message)
      } finally {
        await w.close()
      }
    }
  }, 180_000)

  it('the .mcp.json form is read too', async () => {
    const w = await runWorker(bundle, {
      ISOAGENT_TOKEN: TOKEN,
      MCP_SERVERS: JSON.stringify({ mcpServers: { desk: { type: 'http', url: mcp.url } } }),
    })
    try {
      const id = await openSession(w.url)
      const status = await fetch(`${w.url}/v1/sessions/${id}/mcp`, { headers: auth })
      expect(await status.json()).toEqual([
        expect.objectContaining({ name: 'desk', connected: true }),
      ])
    } finally {
      await w.close()
    }
  }, 120_000)
})
