import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace, type Session } from '../../adapters/index.ts'
import '../../adapters/node/index.ts'
import { startServer, type TestServer } from './http-fixture.ts'
import { serveFixtures, webFetchCases, type ResultJson } from './web-fetch-cases.ts'

let server: TestServer
let session: Session

beforeAll(async () => {
  server = await startServer()
  serveFixtures(server)
  session = await Agent.create().session(memoryWorkspace(), { net: { allowHosts: ['127.0.0.1'] } })
})
afterAll(async () => {
  await session.close()
  await server.close()
})

const call = async (args: Record<string, unknown>) =>
  JSON.parse(JSON.stringify(await session.tool('web_fetch', args))) as ResultJson

describe('web_fetch on Node', () => {
  webFetchCases(call, () => server)

  it('shows events the URL without its query', async () => {
    const seen: string[] = []
    const stop = new AbortController()
    const watching = (async () => {
      for await (const e of session.events({ signal: stop.signal })) seen.push(JSON.stringify(e))
    })()
    await session.governedTool('web_fetch', {
      url: server.url('/docs/page.html?token=SECRETTOKEN'),
    })
    await new Promise((r) => setTimeout(r, 20))
    stop.abort()
    await watching.catch(() => undefined)
    expect(seen.some((e) => e.includes('tool_start'))).toBe(true)
    expect(seen.join('\n')).not.toContain('SECRETTOKEN')
  })

  it('reports the resolved address check on Node', async () => {
    const r = await call({ url: server.url('/docs/page.html') })
    expect(r.metadata?.address_check).toBe('resolved')
  })

  it('is offered on every workspace, download only on local disk', async () => {
    expect(session.toolNames()).toContain('web_fetch')
    expect(session.toolNames()).not.toContain('download')
  })

  it('refuses loopback without allowHosts', async () => {
    const plain = await Agent.create().session(memoryWorkspace())
    const r = await plain.tool('web_fetch', { url: server.url('/docs/page.html') })
    expect(r.errorKind?.type).toBe('permission_denied')
    await plain.close()
  })

  it('refuses malformed net options', async () => {
    for (const net of [
      { allowHosts: 'x' },
      { allowHosts: ['a b'] },
      { resolve: 1 },
      { other: 1 },
      { userAgent: '\n' },
    ]) {
      await expect(
        Agent.create().session(memoryWorkspace(), { net: net as never }),
      ).rejects.toMatchObject({ code: 'invalid_argument' })
    }
  })

  it('sends the configured User-Agent', async () => {
    const s = await Agent.create().session(memoryWorkspace(), {
      net: { allowHosts: ['127.0.0.1'], userAgent: 'fixture-agent/1' },
    })
    await s.tool('web_fetch', { url: server.url('/docs/page.html') })
    expect(server.lastHeaders('/docs/page.html')?.['user-agent']).toBe('fixture-agent/1')
    await s.close()
  })
})
