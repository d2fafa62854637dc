// MCP tools governed as built-in tools are: a preToolUse hook matched by name (it blocks, and
// changing its copy of the arguments changes nothing), the session budget charged by MCP calls
// and their output, and projection (a large MCP result cut with evidence and its whole original
// kept as an artifact, as a built-in tool's). Real SDK McpServer over Streamable HTTP on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { Agent, memoryWorkspace, ToolResultTransformPolicy } from '../../adapters/index.ts'
import { streamableServer, type LoopbackMcp } from './http-servers.ts'
import { toolServer } from './fixtures/tool-server.mjs'

let http: LoopbackMcp
/** Texts the server's `count` tool was called with, in order. */
const counted: string[] = []

beforeAll(async () => {
  http = await streamableServer(() => {
    const server = toolServer()
    server.registerTool(
      'count',
      { description: 'Records its text', inputSchema: { text: z.string() } },
      async ({ text }) => {
        counted.push(text)
        return { content: [{ type: 'text', text: `counted ${text}` }] }
      },
    )
    return server
  })
})
afterAll(async () => {
  await http?.close()
})

const mcpServers = () => ({
  srv: { transport: 'http' as const, url: http.url, toolTimeoutMs: 30_000 },
})

async function open(options: Parameters<ReturnType<typeof Agent.create>['session']>[1]) {
  return Agent.create({ mcpServers: mcpServers() }).session(
    memoryWorkspace({ 'a.txt': 'a\n' }),
    options,
  )
}

describe('MCP tools under the session governance of built-in tools', () => {
  it('a preToolUse hook on mcp__srv__* blocks by name; its copy of the args changes nothing', async () => {
    counted.length = 0
    const session = await open({
      hooks: {
        preToolUse: (c) => {
          if (c.toolName === 'mcp__srv__wipe') return { block: 'never wipe' }
          if (c.toolName.startsWith('mcp__srv__')) (c.args as { text?: string }).text = 'hooked'
          return undefined
        },
      },
    })
    try {
      const blocked = await session.tool('mcp__srv__wipe', {})
      expect(blocked.exitCode).toBe(1)
      expect(blocked.errorKind?.type).toBe('hook_denied')
      expect(blocked.output).toContain('never wipe')
      const r = await session.tool('mcp__srv__count', { text: 'original' })
      expect(r.exitCode).toBe(0)
      expect(r.output).toBe('counted original')
      expect(counted).toEqual(['original'])
    } finally {
      await session.close()
    }
  })

  it('maxToolCalls counts MCP calls with built-in ones, and refuses before the server', async () => {
    counted.length = 0
    const session = await open({ budget: { maxToolCalls: 3 } })
    try {
      expect((await session.tool('mcp__srv__count', { text: 'one' })).exitCode).toBe(0)
      expect((await session.tool('read', { file_path: 'a.txt' })).exitCode).toBe(0)
      expect((await session.tool('mcp__srv__count', { text: 'three' })).exitCode).toBe(0)
      const refused = await session.tool('mcp__srv__count', { text: 'four' })
      expect(refused.exitCode).toBe(1)
      expect(refused.errorKind).toMatchObject({
        type: 'permission_denied',
        reason: 'budget_exhausted',
      })
      expect(counted).toEqual(['one', 'three'])
    } finally {
      await session.close()
    }
  })

  it('maxOutputBytes is charged by MCP output', async () => {
    counted.length = 0
    const session = await open({ budget: { maxOutputBytes: 3000 } })
    try {
      const big = await session.tool('mcp__srv__count', { text: 'x'.repeat(4000) })
      expect(big.exitCode).toBe(0)
      const refused = await session.tool('read', { file_path: 'a.txt' })
      expect(refused.exitCode).toBe(1)
      expect(refused.errorKind).toMatchObject({
        type: 'permission_denied',
        reason: 'budget_exhausted',
      })
      expect(refused.output).toContain('maxOutputBytes=3000')
      expect(counted).toHaveLength(1)
    } finally {
      await session.close()
    }
  })

  for (const [policyName, policy, lossMode] of [
    ['conservative', ToolResultTransformPolicy.conservative(), 'bounded_preview'],
    ['contextEfficient', ToolResultTransformPolicy.contextEfficient(), 'head_tail'],
  ] as const) {
    it(`a large MCP result is projected (${policyName}) with evidence and an artifact`, async () => {
      const text = Array.from({ length: 6000 }, (_, i) => `line ${i} ${'y'.repeat(30)}`).join('\n')
      const original = `echo: ${text}`
      const session = await open({ toolResultTransformPolicy: policy })
      try {
        const r = await session.tool('mcp__srv__echo', { text })
        expect(r.exitCode).toBe(0)
        const evidence = r.metadata?.a3s_tool_result_evidence as Record<string, unknown>
        expect(evidence).toMatchObject({
          original_bytes: new TextEncoder().encode(original).length,
          projected_bytes: new TextEncoder().encode(r.output).length,
          loss_mode: lossMode,
        })
        expect(r.output.length).toBeLessThan(original.length)
        expect(r.output.length).toBeLessThanOrEqual(100 * 1024)
        expect(r.output.startsWith('echo: line 0 ')).toBe(true)
        if (lossMode === 'head_tail')
          expect(r.output.endsWith('line 5999 ' + 'y'.repeat(30))).toBe(true)
        const ref = String(evidence.content_ref)
        expect(ref).toMatch(/^a3s:\/\/tool-output\/mcp__srv__echo\/[0-9a-f]{64}$/)
        const stored = await session.getArtifact(ref)
        expect(stored && new TextDecoder().decode(stored)).toBe(original)
      } finally {
        await session.close()
      }
    })
  }

  it('a small MCP result passes unchanged with inline evidence', async () => {
    const session = await open({})
    try {
      const r = await session.tool('mcp__srv__echo', { text: 'small' })
      expect(r.output).toBe('echo: small')
      expect(r.metadata?.a3s_tool_result_evidence).toMatchObject({
        loss_mode: 'none',
        content_ref: expect.stringMatching(/^inline:sha256:[0-9a-f]{64}$/),
      })
    } finally {
      await session.close()
    }
  })
})
