// An app served with `isoagent/edge/node` checks resolved addresses even over a memory workspace
// (no `isoagent/node` import in this file).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace } from '../../adapters/index.ts'
import { createApp } from '../../edge/http/app.ts'
import { serve } from '../../edge/node.ts'
import { startServer, type TestServer } from '../net/http-fixture.ts'

let site: TestServer
beforeAll(async () => {
  site = await startServer()
  site.route('/page', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.end('hello')
  })
})
afterAll(() => site.close())

describe('isoagent/edge/node', () => {
  it('gives web_fetch the resolving transport', async () => {
    const token = 'edge-node-token'
    const app = createApp({
      workspace: () => memoryWorkspace(),
      token,
      session: { net: { allowHosts: ['127.0.0.1'] } },
    })
    const handle = await serve(app, { port: 0, hostname: '127.0.0.1', handleSignals: false })
    try {
      const auth = { authorization: `Bearer ${token}` }
      const created = await fetch(`${handle.url}/v1/sessions`, { method: 'POST', headers: auth })
      const { id } = (await created.json()) as { id: string }
      const res = await fetch(`${handle.url}/v1/sessions/${id}/tools/web_fetch`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ args: { url: site.url('/page') } }),
      })
      const result = (await res.json()) as { exitCode: number; metadata: { address_check: string } }
      expect(result.exitCode).toBe(0)
      expect(result.metadata.address_check).toBe('resolved')
      const direct = await (
        await Agent.create().session(memoryWorkspace(), {
          net: { allowHosts: ['127.0.0.1'] },
        })
      ).tool('web_fetch', { url: site.url('/page') })
      expect(direct.metadata?.address_check).toBe('resolved')
    } finally {
      await handle.close()
    }
  })
})
