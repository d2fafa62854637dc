// web_search's HTTP tiers through isoagent/node's resolving transport: names resolved and
// checked, loopback reached only through net.allowHosts, records saying `resolved`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace } from '../../adapters/index.ts'
import '../../adapters/node/index.ts'
import { startFakeEngines, type FakeEngines } from './fake-engines.ts'

let fakes: FakeEngines
beforeAll(async () => {
  fakes = await startFakeEngines()
})
afterAll(async () => {
  await fakes.close()
})

describe('web_search on the Node transport', () => {
  const port = () => new URL(fakes.base).port
  const engines = () => [
    { name: 'feed', kind: 'rss' as const, url: `http://search.fake.test:${port()}/rss?q={query}` },
  ]

  it('resolves engine names itself and refuses a private answer', async () => {
    const s = await Agent.create().session(memoryWorkspace(), {
      net: { resolve: async () => ['127.0.0.1'] },
      webSearch: { engines: engines() },
    })
    const before = fakes.count('/rss')
    const r = await s.tool('web_search', { query: 'x' })
    expect(r.exitCode).toBe(1)
    const failure = (r.metadata as { engine_failures: { kind: string; message: string }[] })
      .engine_failures[0]!
    expect(failure.kind).toBe('refused')
    expect(fakes.count('/rss')).toBe(before)
    await s.close()
  })

  it('reaches it when the name is on allowHosts, and says the address was resolved', async () => {
    const s = await Agent.create().session(memoryWorkspace(), {
      net: { resolve: async () => ['127.0.0.1'], allowHosts: ['search.fake.test'] },
      webSearch: { engines: engines() },
    })
    const r = await s.tool('web_search', { query: 'x' })
    expect(r.exitCode, r.output).toBe(0)
    const tiers = (r.metadata as { tiers: { engines: { address_check?: string }[] }[] }).tiers
    expect(tiers[0]!.engines[0]!.address_check).toBe('resolved')
    await s.close()
  })
})
