// Credentials of MCP servers added to a running session (session.addMcpServer, the HTTP API's
// POST /v1/sessions/:id/mcp) are redacted from tool output and session events like those of
// servers configured when the session opened: header values, oauth access tokens, client
// secrets and tokens obtained by a client-credentials grant.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace, type SessionEvent } from '../../adapters/index.ts'
import { createApp } from '../../edge/index.ts'
import { serve } from '../../edge/node.ts'
import { streamableServer, type LoopbackMcp } from './http-servers.ts'
import { toolServer } from './fixtures/tool-server.mjs'

const HEADER_TOKEN = 'late-header-token-5150'
const GRANTED = 'granted-late-token-8086'
let open: LoopbackMcp
let tokenUrl: string
const tokenServer = createServer((req, res) => {
  req.resume()
  req.on('end', () =>
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ access_token: GRANTED, token_type: 'bearer' })),
  )
})

beforeAll(async () => {
  open = await streamableServer(() => toolServer())
  await new Promise<void>((r) => tokenServer.listen(0, '127.0.0.1', r))
  tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`
})
afterAll(async () => {
  await open?.close()
  await new Promise((r) => tokenServer.close(r))
})

/** Every session event until the stream is idle, as JSON. */
function collect(session: Awaited<ReturnType<ReturnType<typeof Agent.create>['session']>>) {
  const events: SessionEvent[] = []
  const stop = new AbortController()
  const done = (async () => {
    for await (const e of session.events({ signal: stop.signal })) events.push(e)
  })().catch(() => undefined)
  return {
    async text() {
      stop.abort()
      await done
      return JSON.stringify(events)
    },
  }
}

describe('credentials of servers added later', () => {
  it('session.addMcpServer: header values, access tokens and granted tokens never show', async () => {
    const session = await Agent.create().session(memoryWorkspace({}))
    const events = collect(session)
    try {
      await session.addMcpServer('hdr', {
        transport: 'http',
        url: open.url,
        headers: { 'X-Api-Key': HEADER_TOKEN },
      })
      await session.addMcpServer('cc', {
        transport: 'http',
        url: open.url,
        oauth: { tokenUrl, clientId: 'cid', clientSecret: 'client-secret-late-99' },
      })
      const outputs: string[] = []
      for (const text of [HEADER_TOKEN, GRANTED, 'client-secret-late-99']) {
        const r = await session.tool('mcp__hdr__echo', { text: `leak ${text}` })
        expect(r.exitCode).toBe(0)
        outputs.push(r.output)
        outputs.push((await session.tool('mcp__cc__echo', { text: `leak ${text}` })).output)
      }
      for (const out of outputs) {
        expect(out).toContain('[REDACTED]')
        expect(out).not.toMatch(/late-header-token|granted-late-token|client-secret-late/)
      }
      const seen = await events.text()
      expect(seen).toContain('mcp__hdr__echo')
      expect(seen).not.toMatch(/late-header-token|granted-late-token|client-secret-late/)
    } finally {
      await session.close()
    }
  })

  it('POST /v1/sessions/:id/mcp: the added server credentials are redacted in results', async () => {
    const token = 'late-redaction-api-token-0001'
    const host = new URL(open.url).host
    const app = createApp({
      workspace: () => memoryWorkspace({}),
      token,
      session: { net: { allowHosts: [host] } },
    })
    const server = await serve(app, { port: 0, hostname: '127.0.0.1', handleSignals: false })
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    try {
      const created = await fetch(`${server.url}/v1/sessions`, {
        method: 'POST',
        headers: auth,
        body: '{}',
      })
      const { id } = (await created.json()) as { id: string }
      const added = await fetch(`${server.url}/v1/sessions/${id}/mcp`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          name: 'remote',
          config: { transport: 'http', url: open.url, headers: { 'X-Api-Key': HEADER_TOKEN } },
        }),
      })
      expect(added.status).toBe(200)
      // peek is read-only and closed-world: the governed path runs it without asking.
      const called = await fetch(`${server.url}/v1/sessions/${id}/tools/mcp__remote__peek`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ args: { key: `key ${HEADER_TOKEN}` } }),
      })
      const text = await called.text()
      expect(called.status).toBe(200)
      expect(text).toContain('[REDACTED]')
      expect(text).not.toContain(HEADER_TOKEN)
    } finally {
      await server.close()
    }
  })
})
