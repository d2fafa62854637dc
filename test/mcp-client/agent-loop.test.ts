// The agent loop offered MCP tools: the scripted loopback fake of both providers' wire protocols
// calls `mcp__srv__<tool>` on a real SDK McpServer over Streamable HTTP, and the result goes back
// to the model in the next request; a preToolUse hook on `mcp__srv__*` reaches the model as an
// error result, and the server never sees the call.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  Agent,
  anthropic,
  memoryWorkspace,
  openAICompatible,
  type AgentEvent,
  type LanguageModel,
} from '../../adapters/index.ts'
import { startFakeProvider, type FakeProvider } from '../llm/fake-provider.ts'
import { streamableServer, type LoopbackMcp } from './http-servers.ts'
import { toolServer } from './fixtures/tool-server.mjs'

type Protocol = 'openai' | 'anthropic'

let fake: FakeProvider
let http: LoopbackMcp
/** Keys the server's `count` tool was called with, in order. */
const counted: string[] = []

beforeAll(async () => {
  fake = await startFakeProvider()
  http = await streamableServer(() => {
    const server = toolServer()
    server.registerTool(
      'count',
      {
        description: 'Records its key (read-only, closed-world)',
        inputSchema: { key: z.string() },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      async ({ key }) => {
        counted.push(key)
        return { content: [{ type: 'text', text: `counted ${key}` }] }
      },
    )
    return server
  })
})
afterAll(async () => {
  await Promise.all([fake?.close(), http?.close()])
})
beforeEach(() => {
  fake.reset([])
  counted.length = 0
})

function model(protocol: Protocol): LanguageModel {
  const options = { baseURL: fake.baseURL, apiKey: 'sk-test', model: 'fake-1', retryDelayMs: 5 }
  return protocol === 'openai' ? openAICompatible(options) : anthropic(options)
}

const call = (name: string, args: unknown) => ({ name, arguments: JSON.stringify(args) })

/** The tool messages of a recorded request, in either protocol's shape, as text. */
function toolTexts(body: Record<string, unknown>): string[] {
  const out: string[] = []
  for (const m of body.messages as Record<string, unknown>[]) {
    if (m.role === 'tool') out.push(String(m.content))
    if (Array.isArray(m.content))
      for (const block of m.content as Record<string, unknown>[])
        if (block.type === 'tool_result')
          out.push(
            typeof block.content === 'string' ? block.content : JSON.stringify(block.content),
          )
  }
  return out
}

/** The tools a recorded request offered, name and JSON Schema, in either protocol's shape. */
function offered(body: Record<string, unknown>): { name: string; schema: unknown }[] {
  return (body.tools as Record<string, unknown>[]).map((t) => {
    if (t.type === 'function') {
      const f = t.function as { name: string; parameters: unknown }
      return { name: f.name, schema: f.parameters }
    }
    return { name: t.name as string, schema: t.input_schema }
  })
}

const mcpServers = () => ({
  srv: { transport: 'http' as const, url: http.url, toolTimeoutMs: 30_000 },
})

for (const protocol of ['openai', 'anthropic'] as const) {
  describe(`agent loop with MCP tools over the ${protocol} wire protocol`, () => {
    it('offers mcp__srv__<tool> with its schema, calls it, and returns the result', async () => {
      fake.reset([
        { text: 'Counting.', toolCalls: [call('mcp__srv__count', { key: `k-${protocol}` })] },
        { toolCalls: [call('mcp__srv__structured', { n: 21 })] },
        { text: 'Counted and doubled.' },
      ])
      // count is read-only and closed-world (no confirmation); structured is unannotated, so
      // the model's call needs an allow rule.
      const session = await Agent.create({
        model: model(protocol),
        mcpServers: mcpServers(),
      }).session(memoryWorkspace({}), { permissions: { allow: ['mcp__srv__structured'] } })
      try {
        const events: AgentEvent[] = []
        for await (const e of session.stream('count and double')) events.push(e)
        expect(events.at(-1)).toMatchObject({
          type: 'finish',
          steps: 3,
          text: 'Counted and doubled.',
          finishReason: 'stop',
        })
        const results = events.filter((e) => e.type === 'tool_result')
        expect(results.map((r) => r.type === 'tool_result' && [r.toolName, r.exitCode])).toEqual([
          ['mcp__srv__count', 0],
          ['mcp__srv__structured', 0],
        ])
        expect(counted).toEqual([`k-${protocol}`])
        expect(fake.requests).toHaveLength(3)
        expect(fake.requests.every((r) => r.protocol === protocol)).toBe(true)
        const tools = offered(fake.requests[0]!.body)
        expect(tools.map((t) => t.name)).toEqual(session.toolNames())
        expect(tools.find((t) => t.name === 'mcp__srv__count')!.schema).toMatchObject({
          type: 'object',
          properties: { key: { type: 'string' } },
          required: ['key'],
        })
        expect(toolTexts(fake.requests[1]!.body)).toEqual([`counted k-${protocol}`])
        const second = toolTexts(fake.requests[2]!.body)
        expect(second).toHaveLength(2)
        expect(JSON.parse(second[1]!)).toEqual({ doubled: 42, list: ['a', 'b'] })
      } finally {
        await session.close()
      }
    })

    it('an MCP isError result reaches the model as an error result', async () => {
      fake.reset([{ toolCalls: [call('mcp__srv__fail', {})] }, { text: 'it failed' }])
      const session = await Agent.create({
        model: model(protocol),
        mcpServers: mcpServers(),
      }).session(memoryWorkspace({}), { permissions: { allow: ['mcp__srv__fail'] } })
      try {
        const result = await session.send('try it')
        expect(result.text).toBe('it failed')
        const [text] = toolTexts(fake.requests[1]!.body)
        expect(text).toMatch(/^Error/)
        expect(text).toContain('it broke')
        if (protocol === 'anthropic') {
          const last = (fake.requests[1]!.body.messages as { content: unknown }[]).at(-1)!
          expect(JSON.stringify(last.content)).toContain('"is_error":true')
        }
      } finally {
        await session.close()
      }
    })

    it('a large MCP result reaches the model projected, the original kept as an artifact', async () => {
      const text = Array.from({ length: 6000 }, (_, i) => `line ${i} ${'z'.repeat(30)}`).join('\n')
      fake.reset([{ toolCalls: [call('mcp__srv__echo', { text })] }, { text: 'seen' }])
      const session = await Agent.create({
        model: model(protocol),
        mcpServers: mcpServers(),
      }).session(memoryWorkspace({}), { permissions: { allow: ['mcp__srv__echo'] } })
      try {
        const events: AgentEvent[] = []
        for await (const e of session.stream('echo a lot')) events.push(e)
        expect(events.at(-1)).toMatchObject({ type: 'finish', text: 'seen' })
        const [sent] = toolTexts(fake.requests[1]!.body)
        expect(sent!.startsWith('echo: line 0 ')).toBe(true)
        expect(new TextEncoder().encode(sent!).length).toBeLessThanOrEqual(100 * 1024)
        expect(sent).not.toContain('line 5999 ')
        const result = events.find((e) => e.type === 'tool_result')
        const evidence =
          result?.type === 'tool_result'
            ? (result.metadata?.a3s_tool_result_evidence as { content_ref: string } | undefined)
            : undefined
        expect(evidence?.content_ref).toMatch(/^a3s:\/\/tool-output\/mcp__srv__echo\//)
        const stored = await session.getArtifact(evidence!.content_ref)
        expect(stored && new TextDecoder().decode(stored)).toBe(`echo: ${text}`)
      } finally {
        await session.close()
      }
    })

    it('a preToolUse hook matching mcp__srv__* blocks the model call before the server', async () => {
      fake.reset([
        { toolCalls: [call('mcp__srv__count', { key: 'blocked' })] },
        { toolCalls: [call('read', { file_path: 'a.txt' })] },
        { text: 'blocked, read instead' },
      ])
      const seen: string[] = []
      const session = await Agent.create({
        model: model(protocol),
        mcpServers: mcpServers(),
      }).session(memoryWorkspace({ 'a.txt': 'plain file\n' }), {
        hooks: {
          preToolUse: (c) => {
            seen.push(c.toolName)
            return c.toolName.startsWith('mcp__srv__') ? { block: 'no MCP today' } : undefined
          },
        },
      })
      try {
        const result = await session.send('count it')
        expect(result.text).toBe('blocked, read instead')
        expect(seen).toEqual(['mcp__srv__count', 'read'])
        expect(counted).toEqual([])
        const [blocked] = toolTexts(fake.requests[1]!.body)
        expect(blocked).toMatch(/^Error \(hook_denied\)/)
        expect(blocked).toContain('no MCP today')
        expect(toolTexts(fake.requests[2]!.body)[1]).toContain('plain file')
      } finally {
        await session.close()
      }
    })
  })
}
