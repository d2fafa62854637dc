// The MCP endpoint bundled (Node built-ins forbidden) into a Worker and run in workerd through
// Miniflare; the SDK's own client drives it through a fetch that is Miniflare's dispatchFetch.
import { gzipSync } from 'node:zlib'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Plugin } from 'esbuild'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace } from '../../adapters/index.ts'
import { bundle, nodeSpecifiers } from '../runtime/bundle.ts'

// A plain Worker cannot keep a session across requests (workerd refuses I/O objects of one request
// in another), so the endpoint lives in a Durable Object, as the app's sessions do.
const WORKER = `
import { DurableObject } from 'cloudflare:workers'
import { memoryWorkspace } from '../../adapters/index.ts'
import { agentMcpSessions, createMcpHandler } from '../../edge/mcp/index.ts'

export class McpEndpoint extends DurableObject {
  handler = createMcpHandler({
    sessions: agentMcpSessions({
      workspace: () => memoryWorkspace({ 'a.txt': 'alpha\\nbeta\\n' }),
      session: { permissions: { ask: ['write(asked/**)'] } },
    }),
  })
  async fetch(request) {
    const url = new URL(request.url)
    if (url.pathname === '/mcp') return this.handler.handle(request)
    return Response.json({ size: this.handler.size, userAgent: navigator.userAgent })
  }
}

export default {
  fetch(request, env) {
    return env.MCP.get(env.MCP.idFromName('mcp')).fetch(request)
  },
}
`

/** `cloudflare:*` modules are the runtime's own: left to workerd. */
const workersRuntime: Plugin = {
  name: 'workers-runtime',
  setup(b) {
    b.onResolve({ filter: /^cloudflare:/ }, (args) => ({ path: args.path, external: true }))
  },
}

describe('MCP Streamable HTTP inside workerd (Miniflare dispatchFetch, SDK client)', () => {
  let mf: Miniflare
  let code: string
  const clients: Client[] = []
  const connect = async (capabilities: ConstructorParameters<typeof Client>[1] = {}) => {
    const client = new Client({ name: 'isoagent-test', version: '0.0.0' }, capabilities)
    const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), {
      fetch: (url, init) =>
        mf.dispatchFetch(String(url), init as never) as unknown as Promise<Response>,
    })
    await client.connect(transport)
    clients.push(client)
    return { client, transport }
  }
  const call = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult

  beforeAll(async () => {
    code = await bundle(
      { contents: WORKER, resolveDir: import.meta.dirname, target: 'workerd' },
      { plugins: [workersRuntime] },
    )
    mf = new Miniflare({
      modules: true,
      script: code,
      durableObjects: { MCP: 'McpEndpoint' },
      compatibilityDate: '2026-04-01',
      cf: false,
      telemetry: { enabled: false },
    })
    await mf.ready
  })
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)))
    await mf?.dispose()
  })

  it('bundles without Node built-ins', () => {
    expect(nodeSpecifiers(code)).toEqual([])
    expect(code).toContain('CfWorkerJsonSchemaValidator')
    const kib = (n: number) => Math.round(n / 1024)
    console.log(
      `MCP worker bundle: ${kib(code.length)} KiB, gzip ${kib(gzipSync(code).length)} KiB`,
    )
  })

  it('lists the memory workspace tools (no bash) and calls them inside workerd', async () => {
    const { client, transport } = await connect()
    expect(transport.sessionId).toBeDefined()
    const { tools } = await client.listTools()
    const expected = await Agent.create().session(memoryWorkspace())
    expect(tools.map((t) => t.name)).toEqual(expected.toolNames())
    await expected.close()
    expect(tools.map((t) => t.name)).not.toContain('bash')

    const wrote = await call(client, 'write', { file_path: 'w.txt', content: 'from workerd\n' })
    expect(wrote.isError).toBe(false)
    const read = await call(client, 'read', { file_path: 'w.txt' })
    expect(read).toMatchObject({
      isError: false,
      content: [{ type: 'text', text: '     1\tfrom workerd' }],
    })
    const failed = await call(client, 'read', { file_path: 'nope.txt' })
    expect(failed).toMatchObject({
      isError: true,
      structuredContent: { errorKind: { type: 'not_found' } },
    })
    const sized = (await (await mf.dispatchFetch('http://127.0.0.1/size')).json()) as {
      size: number
      userAgent: string
    }
    expect(sized.userAgent).toBe('Cloudflare-Workers')
    expect(sized.size).toBeGreaterThanOrEqual(1)

    await transport.terminateSession()
    const after = (await (await mf.dispatchFetch('http://127.0.0.1/size')).json()) as {
      size: number
    }
    expect(after.size).toBe(sized.size - 1)
  })
  it('asks the client by elicitation inside workerd (the answer is validated without codegen)', async () => {
    const { client } = await connect({ capabilities: { elicitation: {} } })
    const answers = [true, false]
    client.setRequestHandler(ElicitRequestSchema, () => ({
      action: 'accept',
      content: { approve: answers.shift()! },
    }))
    const yes = await call(client, 'write', { file_path: 'asked/yes.txt', content: 'y' })
    expect(yes.isError).toBe(false)
    const no = await call(client, 'write', { file_path: 'asked/no.txt', content: 'n' })
    expect(no).toMatchObject({
      isError: true,
      structuredContent: { errorKind: { type: 'permission_denied' } },
    })
    expect(answers).toEqual([])
    expect((await call(client, 'read', { file_path: 'asked/yes.txt' })).isError).toBe(false)
  })
})
