// Issue 27 "DNS rebinding": a request whose Host or Origin names a foreign site is a 403, on the
// REST routes and on /mcp, against a real `serve` on loopback (requests sent with node:http, which
// lets a test forge Host as a rebound browser would send it).
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryWorkspace } from '../../adapters/index.ts'
import { createApp } from '../../edge/index.ts'
import { serve, type ServerHandle } from '../../edge/node.ts'

const TOKEN = 'host-token'

interface Answer {
  status: number
  body: string
}

/** A request to 127.0.0.1:`port` with exactly these headers (Host included). */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method, path, headers, setHost: false },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 't', version: '0' },
  },
})
const mcpHeaders = {
  authorization: `Bearer ${TOKEN}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
}

describe('Host and Origin checks (DNS rebinding)', () => {
  let plain: ServerHandle
  let proxied: ServerHandle
  beforeAll(async () => {
    const workspace = () => memoryWorkspace({ 'a.txt': 'a\n' })
    plain = await serve(createApp({ workspace, token: TOKEN }), { port: 0, handleSignals: false })
    proxied = await serve(
      createApp({ workspace, token: TOKEN, allowedHosts: ['agent.example.com', '.corp.test'] }),
      { port: 0, handleSignals: false },
    )
  })
  afterAll(async () => {
    await Promise.all([plain?.close(), proxied?.close()])
  })

  const rest = (port: number, headers: Record<string, string>) =>
    send(port, 'POST', '/v1/sessions', { authorization: `Bearer ${TOKEN}`, ...headers })
  const mcp = (port: number, headers: Record<string, string>) =>
    send(port, 'POST', '/mcp', { ...mcpHeaders, ...headers }, INITIALIZE)

  it('serves loopback names and IP literals on the bound port', async () => {
    const p = plain.port
    for (const host of [`127.0.0.1:${p}`, `localhost:${p}`, `[::1]:${p}`]) {
      expect((await rest(p, { host })).status, host).toBe(201)
      expect((await mcp(p, { host })).status, host).toBe(200)
    }
    const sameOrigin = { host: `localhost:${p}`, origin: `http://localhost:${p}` }
    expect((await rest(p, sameOrigin)).status).toBe(201)
    expect((await send(p, 'GET', '/v1/health', { host: `127.0.0.1:${p}` })).status).toBe(200)
  })

  it('refuses a foreign Host with 403 host_not_allowed on REST, /mcp, health and the page', async () => {
    const p = plain.port
    for (const host of [`evil.example:${p}`, 'evil.example', `localhost:${p + 1}`]) {
      const answers = [
        await rest(p, { host }),
        await mcp(p, { host }),
        await send(p, 'GET', '/v1/health', { host }),
        await send(p, 'GET', '/', { host }),
      ]
      for (const answer of answers) {
        expect(answer.status, host).toBe(403)
        expect(JSON.parse(answer.body).error.code).toBe('host_not_allowed')
      }
    }
  })

  it('refuses a foreign Origin even with a loopback Host', async () => {
    const p = plain.port
    for (const origin of ['http://evil.example', `http://evil.example:${p}`, 'null']) {
      const headers = { host: `127.0.0.1:${p}`, origin }
      expect((await rest(p, headers)).status, origin).toBe(403)
      expect((await mcp(p, headers)).status, origin).toBe(403)
    }
  })

  it('serves the names allowedHosts lists, and still refuses others', async () => {
    const p = proxied.port
    for (const host of ['agent.example.com', 'agent.example.com:443', 'a.corp.test', 'corp.test']) {
      expect((await rest(p, { host })).status, host).toBe(201)
      expect((await mcp(p, { host, origin: `https://${host}` })).status, host).toBe(200)
    }
    expect((await rest(p, { host: 'agent.example.com.evil.example' })).status).toBe(403)
    expect(
      (await mcp(p, { host: 'agent.example.com', origin: 'https://evil.example' })).status,
    ).toBe(403)
  })
})
