// Config parsing (.mcp.json), the gating rule, stdio outside Node, OAuth and the safe HTTP
// policy for URLs that are not the host's own.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  Agent,
  confirmationReason,
  memoryWorkspace,
  parseMcpJson,
  safeMcpFetch,
  setMcpStdioLauncher,
  type Session,
} from '../../adapters/index.ts'
import { nodeStdioMcpLauncher } from '../../adapters/node/index.ts'
import { streamableServer, type LoopbackMcp } from './http-servers.ts'
import { toolServer } from './fixtures/tool-server.mjs'

let locked: LoopbackMcp
let session: Session
let tokenUrl: string
const tokenRequests: string[] = []
const tokenServer = createServer((req, res) => {
  let body = ''
  req.on('data', (c: Buffer) => (body += c.toString()))
  req.on('end', () => {
    tokenRequests.push(body)
    const form = new URLSearchParams(body)
    if (form.get('client_id') !== 'cid' || form.get('client_secret') !== 'csecret-123') {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}')
      return
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ access_token: 'granted-token-42', token_type: 'bearer' }))
  })
})

beforeAll(async () => {
  locked = await streamableServer(() => toolServer(), { requireToken: 'granted-token-42' })
  await new Promise<void>((r) => tokenServer.listen(0, '127.0.0.1', r))
  tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`
  session = await Agent.create().session(memoryWorkspace({}))
})

afterAll(async () => {
  await session?.close()
  await locked?.close()
  await new Promise((r) => tokenServer.close(r))
})

describe('.mcp.json', () => {
  it('reads the desktop clients format', () => {
    const servers = parseMcpJson(
      JSON.stringify({
        mcpServers: {
          fs: { command: 'npx', args: ['-y', 'server-fs'], env: { A: 'b' } },
          remote: { type: 'http', url: 'https://example.com/mcp', headers: { 'X-Key': 'k' } },
          legacy: { type: 'sse', url: 'https://example.com/sse' },
        },
      }),
    )
    expect(servers.fs).toEqual({
      transport: 'stdio',
      command: 'npx',
      args: ['-y', 'server-fs'],
      env: { A: 'b' },
    })
    expect(servers.remote).toEqual({
      transport: 'http',
      url: 'https://example.com/mcp',
      headers: { 'X-Key': 'k' },
    })
    expect(servers.legacy).toMatchObject({ transport: 'http' })
  })

  it('refuses what it cannot read, typed', () => {
    expect(() => parseMcpJson('{ nope')).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    )
    expect(() => parseMcpJson('{"servers":{}}')).toThrow(/mcpServers/)
    expect(() => parseMcpJson('{"mcpServers":{"a__b":{"command":"x"}}}')).toThrow(/__/)
    expect(() => parseMcpJson('{"mcpServers":{"a":{"type":"ws","url":"ws://x"}}}')).toThrow(/type/)
    expect(() => parseMcpJson('{"mcpServers":{"a":{"command":"x","bogus":1}}}')).toThrow(/bogus/)
  })
})

describe('the gating rule', () => {
  it('asks unless read-only, closed-world, not destructive and no risk key', () => {
    expect(confirmationReason({})).toBeDefined()
    expect(confirmationReason({ annotations: { readOnlyHint: true } })).toBeDefined()
    expect(
      confirmationReason({ annotations: { readOnlyHint: true, openWorldHint: false } }),
    ).toBeUndefined()
    expect(
      confirmationReason({
        annotations: { readOnlyHint: true, openWorldHint: false, destructiveHint: true },
      }),
    ).toBeDefined()
    const safe = { readOnlyHint: true, openWorldHint: false }
    expect(
      confirmationReason({ annotations: { ...safe, 'x-a3s-risk': 'routine' } }),
    ).toBeUndefined()
    expect(confirmationReason({ annotations: { ...safe, risk: 'write' } })).toBeDefined()
    expect(
      confirmationReason({ annotations: safe, _meta: { 'a3s.risk': 'read-only' } }),
    ).toBeUndefined()
    expect(
      confirmationReason({ annotations: safe, _meta: { 'a3s.risk': 'network' } }),
    ).toBeDefined()
  })
})

describe('runtimes and auth', () => {
  it('stdio is unsupported where no launcher is registered', async () => {
    setMcpStdioLauncher(undefined)
    try {
      await expect(
        session.addMcpServer('local', { transport: 'stdio', command: 'true' }),
      ).rejects.toMatchObject({ code: 'unsupported' })
    } finally {
      setMcpStdioLauncher(nodeStdioMcpLauncher)
    }
  })

  it('without a token the server refuses; oauth.accessToken is sent as Bearer', async () => {
    await expect(
      session.addMcpServer('nokey', { transport: 'http', url: locked.url, toolTimeoutMs: 5000 }),
    ).rejects.toMatchObject({ code: 'permission_denied' })
    const { tools } = await session.addMcpServer('key', {
      transport: 'http',
      url: locked.url,
      oauth: { accessToken: 'granted-token-42' },
    })
    expect(tools).toContain('mcp__key__echo')
    expect((await session.tool('mcp__key__echo', { text: 't' })).output).toBe('echo: t')
    await session.removeMcpServer('key')
  })

  it('client credentials are exchanged for a token', async () => {
    const { tools } = await session.addMcpServer('cc', {
      transport: 'http',
      url: locked.url,
      oauth: { tokenUrl, clientId: 'cid', clientSecret: 'csecret-123', scopes: ['a', 'b'] },
    })
    expect(tools).toContain('mcp__cc__echo')
    expect(new URLSearchParams(tokenRequests.at(-1)).get('grant_type')).toBe('client_credentials')
    expect(new URLSearchParams(tokenRequests.at(-1)).get('scope')).toBe('a b')
    await expect(
      session.addMcpServer('ccbad', {
        transport: 'http',
        url: locked.url,
        oauth: { tokenUrl, clientId: 'cid', clientSecret: 'wrong-secret' },
      }),
    ).rejects.toMatchObject({ code: 'permission_denied' })
    await session.removeMcpServer('cc')
  })

  it('the safe HTTP policy refuses a loopback URL unless net.allowHosts names it', async () => {
    const open = await streamableServer(() => toolServer())
    try {
      await expect(
        session.addMcpServer(
          'priv',
          { transport: 'http', url: open.url },
          { fetch: safeMcpFetch({}) },
        ),
      ).rejects.toMatchObject({ code: 'permission_denied' })
      expect(session.mcpStatus().find((s) => s.name === 'priv')?.toolCount).toBe(0)
      const host = new URL(open.url).host
      const { tools } = await session.addMcpServer(
        'priv',
        { transport: 'http', url: open.url },
        { fetch: safeMcpFetch({ allowHosts: [host] }) },
      )
      expect(tools).toContain('mcp__priv__echo')
      expect((await session.tool('mcp__priv__echo', { text: 'p' })).output).toBe('echo: p')
    } finally {
      await session.removeMcpServer('priv')
      await open.close()
    }
  })

  it('configured credentials never show in results', async () => {
    const s = await Agent.create().session(memoryWorkspace({}), {
      mcpServers: {
        k: {
          transport: 'http',
          url: locked.url,
          headers: { Authorization: 'Bearer granted-token-42' },
        },
      },
    })
    try {
      const r = await s.tool('mcp__k__echo', { text: 'token granted-token-42' })
      expect(r.output).not.toContain('granted-token-42')
      expect(r.output).toContain('[REDACTED]')
    } finally {
      await s.close()
    }
  })
})
