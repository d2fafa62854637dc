// An API-added MCP server's OAuth token request (client credentials by discovery) goes through the
// safe MCP fetch as form parameters: it is sent as text, and still refused toward a private
// address the session's network options do not allow.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import '../../adapters/node/node-runtime.ts'
import { safeMcpFetch } from '../../src/mcp-client/safe-mcp-fetch.ts'

let server: Server
let url: string
const seen: { type?: string; body: string }[] = []

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      seen.push({ type: req.headers['content-type'], body })
      res.setHeader('content-type', 'application/json')
      res.end('{"access_token":"t","token_type":"Bearer"}')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

describe('safeMcpFetch with a form body', () => {
  const form = () => new URLSearchParams({ grant_type: 'client_credentials', scope: 'a b' })

  it('sends URLSearchParams as form text to an allowed host', async () => {
    const fetchFn = safeMcpFetch({ allowHosts: ['127.0.0.1'] })
    const res = await fetchFn(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form(),
    })
    expect(res.status).toBe(200)
    expect(seen.at(-1)).toEqual({
      type: 'application/x-www-form-urlencoded',
      body: 'grant_type=client_credentials&scope=a+b',
    })
  })

  it('refuses the same request toward loopback when the session does not allow it', async () => {
    const before = seen.length
    await expect(safeMcpFetch({})(url, { method: 'POST', body: form() })).rejects.toMatchObject({
      code: expect.stringMatching(/permission_denied|ssrf|blocked/),
    })
    expect(seen.length).toBe(before)
  })
})
