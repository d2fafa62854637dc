// Tool sets that change: tools/list paging, the per-server limit, list_changed during the
// session, reconnecting after the server drops the connection; names and refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { Agent, memoryWorkspace, type Session } from '../../adapters/index.ts'
import { streamableServer, type LoopbackMcp } from './http-servers.ts'
import { pagedServer, toolServer } from './fixtures/tool-server.mjs'

let main: LoopbackMcp
let session: Session

beforeAll(async () => {
  main = await streamableServer(() => toolServer())
  session = await Agent.create().session(memoryWorkspace({}), {
    mcpServers: { dyn: { transport: 'http', url: main.url, toolTimeoutMs: 20_000 } },
  })
})

afterAll(async () => {
  await session?.close()
  await main?.close()
})

describe('paging and limits', () => {
  it('follows tools/list pages', async () => {
    const paged = await streamableServer(() => pagedServer(250, 100))
    try {
      const { tools } = await session.addMcpServer('paged', { transport: 'http', url: paged.url })
      expect(tools).toHaveLength(250)
      expect(tools.at(-1)).toBe('mcp__paged__t249')
      expect((await session.tool('mcp__paged__t249', {})).output).toBe('called t249')
    } finally {
      await session.removeMcpServer('paged')
      await paged.close()
    }
  })

  it('a server advertising 2,000 tools gets 1,024 offered and a note in status', async () => {
    const many = await streamableServer(() => pagedServer(2000, 500))
    try {
      const { tools } = await session.addMcpServer('many', { transport: 'http', url: many.url })
      expect(tools).toHaveLength(1024)
      const status = session.mcpStatus().find((s) => s.name === 'many')!
      expect(status.toolCount).toBe(1024)
      expect(status.skipped?.join('\n')).toMatch(/2000 tools; only the first 1024/)
    } finally {
      await session.removeMcpServer('many')
      await many.close()
    }
  })
})

describe('a changing tool set', () => {
  it('list_changed: a new tool appears in toolDefinitions(), a removed one fails typed', async () => {
    const server = main.servers.at(-1) as McpServer
    const late = server.registerTool(
      'late',
      { description: 'Registered during the session', inputSchema: { n: z.number() } },
      async ({ n }) => ({ content: [{ type: 'text', text: `late ${n}` }] }),
    )
    await expect
      .poll(() => session.toolDefinitions().map((d) => d.name), { timeout: 10_000 })
      .toContain('mcp__dyn__late')
    expect((await session.tool('mcp__dyn__late', { n: 1 })).output).toBe('late 1')
    late.remove()
    await expect
      .poll(() => session.toolNames(), { timeout: 10_000 })
      .not.toContain('mcp__dyn__late')
    const gone = await session.tool('mcp__dyn__late', { n: 2 })
    expect(gone.exitCode).toBe(1)
    expect(gone.errorKind?.type).toBe('unsupported')
  })

  it('a dropped HTTP connection fails the call with transport, then reconnects with backoff', async () => {
    await main.restart()
    const failed = await session.tool('mcp__dyn__echo', { text: 'x' })
    expect(failed.exitCode).toBe(1)
    expect(failed.errorKind?.type).toBe('transport')
    // Its tools stay offered while it reconnects.
    expect(session.toolNames()).toContain('mcp__dyn__echo')
    await expect
      .poll(() => session.mcpStatus().find((s) => s.name === 'dyn')?.connected, { timeout: 10_000 })
      .toBe(true)
    expect((await session.tool('mcp__dyn__echo', { text: 'back' })).output).toBe('echo: back')
  })
})

describe('names', () => {
  it('sanitises, cuts to 64 characters with a hash, and keeps colliding names apart', async () => {
    const long = 'x'.repeat(80)
    const odd = await streamableServer(() => pagedServer(0, 10, ['a.b', 'a b', long, 'ok']))
    try {
      const { tools } = await session.addMcpServer('odd', { transport: 'http', url: odd.url })
      expect(tools).toHaveLength(4)
      expect(new Set(tools).size).toBe(4)
      for (const t of tools) expect(t).toMatch(/^mcp__odd__[A-Za-z0-9_-]+$/)
      for (const t of tools) expect(t.length).toBeLessThanOrEqual(64)
      expect(tools).toContain('mcp__odd__ok')
      const ab = tools.filter((t) => t.startsWith('mcp__odd__a_b_'))
      expect(ab).toHaveLength(2)
      const r = await session.tool(ab[1]!, {})
      expect(r.output).toBe('called a b')
      expect(r.metadata?.mcp).toMatchObject({ tool: 'a b' })
      const longName = tools.find((t) => t.startsWith('mcp__odd__xxx'))!
      expect(longName).toHaveLength(64)
      expect((await session.tool(longName, {})).output).toBe(`called ${long}`)
    } finally {
      await session.removeMcpServer('odd')
      await odd.close()
    }
  })

  it('refuses a server name with __, a bad character, or one colliding with another', async () => {
    const cfg = { transport: 'http', url: main.url } as const
    await expect(session.addMcpServer('a__b', cfg)).rejects.toMatchObject({
      code: 'invalid_argument',
    })
    await expect(session.addMcpServer('a.b', cfg)).rejects.toMatchObject({
      code: 'invalid_argument',
    })
    await expect(session.addMcpServer('tail_', cfg)).rejects.toMatchObject({
      code: 'invalid_argument',
    })
    await expect(session.addMcpServer('DYN', cfg)).rejects.toMatchObject({
      code: 'invalid_argument',
    })
    await expect(session.addMcpServer('dyn', cfg)).rejects.toMatchObject({
      code: 'invalid_argument',
    })
    expect(() => Agent.create({ mcpServers: { a: cfg, A: cfg } })).toThrow(/collide/)
  })

  it('a failed connect is typed, leaves no tools and shows in status; the name can be reused', async () => {
    const cfg = { transport: 'http', url: 'http://127.0.0.1:1/mcp', toolTimeoutMs: 5000 } as const
    await expect(session.addMcpServer('down', cfg)).rejects.toMatchObject({ code: 'transport' })
    const status = session.mcpStatus().find((s) => s.name === 'down')!
    expect(status).toMatchObject({ connected: false, toolCount: 0 })
    expect(status.error).toBeTruthy()
    const { tools } = await session.addMcpServer('down', { transport: 'http', url: main.url })
    expect(tools).toContain('mcp__down__echo')
    await session.removeMcpServer('down')
  })

  it('enabled: false lists the server without connecting it', async () => {
    const { tools } = await session.addMcpServer('off', {
      transport: 'http',
      url: main.url,
      enabled: false,
    })
    expect(tools).toEqual([])
    expect(session.mcpStatus().find((s) => s.name === 'off')).toMatchObject({
      connected: false,
      enabled: false,
      toolCount: 0,
    })
    await session.removeMcpServer('off')
  })
})
