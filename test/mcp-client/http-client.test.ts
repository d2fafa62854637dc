// The MCP client over Streamable HTTP and legacy SSE on loopback, against SDK McpServers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace, type Session } from '../../adapters/index.ts'
import { legacySseServer, streamableServer, type LoopbackMcp } from './http-servers.ts'
import { PNG, toolServer } from './fixtures/tool-server.mjs'

const state = { cancelled: [] as string[] }
let http: LoopbackMcp
let sse: LoopbackMcp
let session: Session

beforeAll(async () => {
  http = await streamableServer(() => toolServer(state))
  sse = await legacySseServer(() => toolServer(state))
  session = await Agent.create({
    mcpServers: { srv: { transport: 'http', url: http.url, toolTimeoutMs: 30_000 } },
  }).session(memoryWorkspace({}))
})

afterAll(async () => {
  await session?.close()
  await http?.close()
  await sse?.close()
})

describe('MCP client over Streamable HTTP', () => {
  it('offers every tool as mcp__srv__<tool>, with the server inputSchema', () => {
    const names = session.toolNames()
    for (const t of ['echo', 'peek', 'wipe', 'image', 'resource', 'structured', 'fail', 'slow'])
      expect(names).toContain(`mcp__srv__${t}`)
    expect(names).toContain('mcp__srv__my_tool_name')
    const echo = session.toolDefinitions().find((d) => d.name === 'mcp__srv__echo')!
    expect(echo.description).toBe('Echo the text back')
    expect(echo.parameters).toMatchObject({
      type: 'object',
      properties: { text: { type: 'string' } },
    })
    expect(session.mcpStatus()).toEqual([
      expect.objectContaining({ name: 'srv', connected: true, enabled: true, transport: 'http' }),
    ])
  })

  it('calls a tool: text output, metadata.mcp', async () => {
    const r = await session.tool('mcp__srv__echo', { text: 'hi' })
    expect(r.exitCode).toBe(0)
    expect(r.output).toBe('echo: hi')
    expect(r.metadata?.mcp).toMatchObject({ server: 'srv', tool: 'echo', isError: false })
  })

  it('validates arguments against the inputSchema in the kernel (nothing sent)', async () => {
    const r = await session.tool('mcp__srv__echo', { text: 5 })
    expect(r.exitCode).toBe(1)
    expect(r.errorKind?.type).toBe('invalid_argument')
  })

  it('stores an image as an artifact with the exact line', async () => {
    const r = await session.tool('mcp__srv__image', {})
    expect(r.exitCode).toBe(0)
    const m = /\[Image: image\/png, (\d+) bytes, artifact: (a3s:\/\/tool-output\/[^\]]+)\]/.exec(
      r.output,
    )
    expect(r.output.startsWith('a pixel\n')).toBe(true)
    expect(Number(m![1])).toBe(PNG.length)
    const bytes = await session.getArtifact(m![2]!)
    expect(Buffer.from(bytes!).equals(PNG)).toBe(true)
  })

  it('stores a resource blob with its line', async () => {
    const r = await session.tool('mcp__srv__resource', {})
    expect(r.output).toMatch(
      /^\[Resource: file:\/\/\/data\.bin, application\/octet-stream, 5 bytes, artifact: a3s:\/\/tool-output\/mcp__srv__resource\/[0-9a-f]{64}\]$/,
    )
  })

  it('shows structuredContent as pretty JSON when there is no text', async () => {
    const r = await session.tool('mcp__srv__structured', { n: 21 })
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.output)).toEqual({ doubled: 42, list: ['a', 'b'] })
    expect(r.output).toContain('\n  "doubled": 42')
    expect(r.metadata?.mcp).toMatchObject({ structuredContent: { doubled: 42 } })
  })

  it('maps isError to exitCode 1 with the text', async () => {
    const r = await session.tool('mcp__srv__fail', {})
    expect(r.exitCode).toBe(1)
    expect(r.output).toBe('it broke')
    expect(r.metadata?.mcp).toMatchObject({ isError: true })
  })

  it('a sanitised name reaches the original tool', async () => {
    const r = await session.tool('mcp__srv__my_tool_name', {})
    expect(r.output).toBe('odd name works')
    expect(r.metadata?.mcp).toMatchObject({ tool: 'my.tool name' })
  })

  it('a 40 MiB image is a typed failure naming the limit', async () => {
    const r = await session.tool('mcp__srv__big_image', { mib: 40 })
    expect(r.exitCode).toBe(1)
    expect(r.errorKind?.type).toBe('transport')
    expect(r.metadata?.limit).toBe('maxBlobBytes')
    const ok = await session.tool('mcp__srv__echo', { text: 'still' })
    expect(ok.output).toBe('echo: still')
  }, 60_000)

  it('a call past toolTimeoutMs is `timeout` and the server sees notifications/cancelled', async () => {
    const s = await Agent.create().session(memoryWorkspace({}), {
      mcpServers: { slowsrv: { transport: 'http', url: http.url, toolTimeoutMs: 4000 } },
    })
    try {
      expect(s.mcpStatus()[0]).toMatchObject({ connected: true })
      const before = state.cancelled.length
      const started = Date.now()
      const r = await s.tool('mcp__slowsrv__slow', { ms: 10_000 })
      expect(r.exitCode).toBe(1)
      expect(r.errorKind).toMatchObject({ type: 'timeout' })
      expect(Date.now() - started).toBeLessThan(6000)
      await expect.poll(() => state.cancelled.length).toBeGreaterThan(before)
    } finally {
      await s.close()
    }
  })

  it('a cancelled call sends notifications/cancelled', async () => {
    const before = state.cancelled.length
    const controller = new AbortController()
    const pending = session.tool('mcp__srv__slow', { ms: 10_000 }, { signal: controller.signal })
    setTimeout(() => controller.abort(), 200)
    const r = await pending
    expect(r.errorKind?.type).toBe('cancelled')
    await expect.poll(() => state.cancelled.length).toBeGreaterThan(before)
  })
})

describe('MCP client over legacy HTTP+SSE', () => {
  it('falls back to the SSE transport and calls tools', async () => {
    const added = await session.addMcpServer('old', { transport: 'http', url: sse.url })
    expect(added.tools).toContain('mcp__old__echo')
    const r = await session.tool('mcp__old__echo', { text: 'legacy' })
    expect(r.output).toBe('echo: legacy')
    expect(session.mcpStatus().find((s) => s.name === 'old')).toMatchObject({ connected: true })
    expect(await session.removeMcpServer('old')).toBe(true)
    expect(session.toolNames().some((n) => n.startsWith('mcp__old__'))).toBe(false)
    const gone = await session.tool('mcp__old__echo', { text: 'x' })
    expect(gone.errorKind?.type).toBe('unsupported')
  })
})
