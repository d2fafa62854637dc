// The same web_fetch cases, with the core bundled for workerd (Node built-ins forbidden) and run
// in workerd through Miniflare, fetching from the loopback fixture server.
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, nodeSpecifiers } from '../runtime/bundle.ts'
import { startServer, type TestServer } from './http-fixture.ts'
import { serveFixtures, webFetchCases, type ResultJson } from './web-fetch-cases.ts'

const WORKER = `
import { Agent, memoryWorkspace } from '../../adapters/index.ts'

export default {
  async fetch(request) {
    try {
      const { args, allowHosts } = await request.json()
      // One session per request: workerd ties I/O objects to the request that made them.
      const session = await Agent.create().session(memoryWorkspace(), { net: { allowHosts } })
      const result = await session.tool('web_fetch', args)
      const tools = session.toolNames()
      await session.close()
      return Response.json({ ...result, tools })
    } catch (error) {
      return new Response(String(error && error.stack ? error.stack : error), { status: 500 })
    }
  },
}
`

let server: TestServer
let mf: Miniflare
let code: string

beforeAll(async () => {
  server = await startServer()
  serveFixtures(server)
  code = await bundle({ contents: WORKER, resolveDir: import.meta.dirname, target: 'workerd' })
  mf = new Miniflare({
    modules: true,
    script: code,
    compatibilityDate: '2026-04-01',
    host: '127.0.0.1',
    port: 0,
    cf: false,
    telemetry: { enabled: false },
  })
  await mf.ready
}, 60_000)
afterAll(async () => {
  await mf?.dispose()
  await server?.close()
})

async function call(args: Record<string, unknown>): Promise<ResultJson & { tools: string[] }> {
  const response = await mf.dispatchFetch('http://worker.test/call', {
    method: 'POST',
    body: JSON.stringify({ args, allowHosts: ['127.0.0.1'] }),
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`worker answered ${response.status}: ${text}`)
  return JSON.parse(text) as ResultJson & { tools: string[] }
}

describe('web_fetch in workerd (Miniflare)', () => {
  it('bundles with no Node built-in', () => {
    expect(nodeSpecifiers(code)).toEqual([])
  })

  webFetchCases(call, () => server)

  it('says only literals are checked, and offers no download', async () => {
    const r = await call({ url: server.url('/docs/page.html') })
    expect(r.metadata?.address_check).toBe('literal_only')
    expect(r.tools).toContain('web_fetch')
    expect(r.tools).not.toContain('download')
  })
})
