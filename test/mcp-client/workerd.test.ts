// The MCP client inside workerd (Miniflare): a Worker bundled without Node built-ins opens a
// session whose MCP client reaches an SDK server on the host's loopback over Streamable HTTP
// (workerd's outbound requests are handed to Node by Miniflare's outboundService).
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, nodeSpecifiers } from '../runtime/bundle.ts'
import { streamableServer, type LoopbackMcp } from './http-servers.ts'
import { toolServer } from './fixtures/tool-server.mjs'

const WORKER = `
import { Agent, memoryWorkspace } from '../../adapters/index.ts'

export default {
  async fetch(request) {
    const url = new URL(request.url).searchParams.get('mcp')
    const session = await Agent.create().session(memoryWorkspace({}), {
      mcpServers: { srv: { transport: 'http', url, toolTimeoutMs: 20000 } },
    })
    try {
      const echo = await session.tool('mcp__srv__echo', { text: 'from workerd' })
      const image = await session.tool('mcp__srv__image', {})
      const structured = await session.tool('mcp__srv__structured', { n: 4 })
      const fail = await session.tool('mcp__srv__fail', {})
      const uri = /artifact: ([^\\]]+)/.exec(image.output)?.[1]
      const stored = uri ? await session.getArtifact(uri) : undefined
      return Response.json({
        names: session.toolNames().filter((n) => n.startsWith('mcp__')),
        status: session.mcpStatus(),
        echo: echo.output,
        image: image.output,
        imageBytes: stored ? stored.length : -1,
        structured: structured.output,
        fail: [fail.exitCode, fail.output],
      })
    } finally {
      await session.close()
    }
  },
}
`

let mf: Miniflare
let code: string
let server: LoopbackMcp

beforeAll(async () => {
  server = await streamableServer(() => toolServer())
  code = await bundle({ contents: WORKER, resolveDir: import.meta.dirname, target: 'workerd' })
  mf = new Miniflare({
    modules: true,
    script: code,
    compatibilityDate: '2026-04-01',
    cf: false,
    telemetry: { enabled: false },
    // Miniflare's Request is its own undici's: re-made for Node's fetch, the answer streamed back.
    outboundService: async (request: Request) => {
      const body = ['GET', 'HEAD'].includes(request.method)
        ? undefined
        : await request.arrayBuffer()
      const answer = await fetch(request.url, {
        method: request.method,
        headers: Object.fromEntries(request.headers as unknown as Iterable<[string, string]>),
        ...(body ? { body } : {}),
      })
      return new Response(answer.body, { status: answer.status, headers: answer.headers }) as never
    },
  })
  await mf.ready
}, 120_000)

afterAll(async () => {
  await mf?.dispose()
  await server?.close()
})

describe('MCP client inside workerd', () => {
  it('bundles without Node built-ins', () => {
    expect(nodeSpecifiers(code)).toEqual([])
  })

  it('connects over Streamable HTTP and maps text, image, structuredContent and isError', async () => {
    const res = await mf.dispatchFetch(`http://worker/?mcp=${encodeURIComponent(server.url)}`)
    const body = (await res.json()) as Record<string, unknown>
    expect(body.status).toEqual([expect.objectContaining({ name: 'srv', connected: true })])
    expect(body.names).toEqual(expect.arrayContaining(['mcp__srv__echo', 'mcp__srv__my_tool_name']))
    expect(body.echo).toBe('echo: from workerd')
    expect(body.image).toMatch(/\[Image: image\/png, \d+ bytes, artifact: a3s:\/\/tool-output\//)
    expect(body.imageBytes).toBeGreaterThan(0)
    expect(JSON.parse(body.structured as string)).toEqual({ doubled: 8, list: ['a', 'b'] })
    expect(body.fail).toEqual([1, 'it broke'])
  }, 60_000)
})
