// web_search's HTTP/RSS and API tiers in workerd (Miniflare): the scenarios bundled into a Worker
// with Node built-ins forbidden, run against the same loopback fakes, must give what they give
// on Node (no browser tier there).
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle } from '../runtime/bundle.ts'
import { startFakeEngines, type FakeEngines } from './fake-engines.ts'
import { runScenarios, SCENARIOS, type ScenarioSummary } from './search-cases.ts'

const WORKER = `
import { runScenarios } from './search-cases.ts'
export default {
  async fetch(request) {
    const base = new URL(request.url).searchParams.get('base')
    return Response.json({ summaries: await runScenarios(base), userAgent: navigator.userAgent })
  },
}
`

let fakes: FakeEngines
let mf: Miniflare | undefined
let inWorkerd: { summaries: ScenarioSummary[]; userAgent: string }
let onNode: ScenarioSummary[]

beforeAll(async () => {
  fakes = await startFakeEngines()
  const script = await bundle({
    contents: WORKER,
    resolveDir: import.meta.dirname,
    target: 'workerd',
  })
  mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2026-04-01',
    host: '127.0.0.1',
    port: 0,
    cf: false,
    telemetry: { enabled: false },
  })
  const response = await mf.dispatchFetch(`http://worker/?base=${encodeURIComponent(fakes.base)}`)
  const text = await response.text()
  if (response.status !== 200) throw new Error(`worker answered ${response.status}: ${text}`)
  inWorkerd = JSON.parse(text) as typeof inWorkerd
  onNode = await runScenarios(fakes.base)
}, 120_000)

afterAll(async () => {
  await mf?.dispose()
  await fakes?.close()
})

describe('web_search HTTP/RSS and API tiers (workerd)', () => {
  it('runs in workerd', () => {
    expect(inWorkerd.userAgent).toContain('Cloudflare-Workers')
    expect(inWorkerd.summaries.map((s) => s.name)).toEqual(SCENARIOS.map((s) => s.name))
  })

  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: the same answer as on Node`, () => {
      const worker = inWorkerd.summaries.find((s) => s.name === scenario.name)!
      const node = onNode.find((s) => s.name === scenario.name)!
      expect(worker).toEqual(node)
    })
  }

  it('searched the fakes from workerd for real', () => {
    const ok = inWorkerd.summaries.filter((s) => s.exitCode === 0)
    expect(ok.length).toBeGreaterThanOrEqual(7)
    expect(ok.every((s) => s.urls.length > 0)).toBe(true)
  })
})
