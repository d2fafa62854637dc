// The generate_object cases in workerd (Miniflare): the core bundled with Node built-ins
// forbidden, its providers fetching the loopback fake, validation by the interpreting validator.
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle } from '../runtime/bundle.ts'
import { checkObjectCase } from './check-object-case.ts'
import { startFakeProvider, type FakeProvider } from './fake-provider.ts'
import { OBJECT_CASES, type CaseRecord } from './generate-object-cases.ts'

const WORKER = `
import { runObjectCases } from './generate-object-cases.ts'

export default {
  async fetch(request) {
    try {
      const base = new URL(request.url).searchParams.get('base')
      const records = await runObjectCases(base)
      return Response.json({ userAgent: navigator.userAgent, records })
    } catch (error) {
      return new Response(String(error && error.stack ? error.stack : error), { status: 500 })
    }
  },
}
`

let fake: FakeProvider
let mf: Miniflare | undefined
let records: CaseRecord[]
let userAgent: string
let script: string

beforeAll(async () => {
  fake = await startFakeProvider()
  for (const c of OBJECT_CASES) fake.program(c.id, c.script)
  script = await bundle({ contents: WORKER, resolveDir: import.meta.dirname, target: 'workerd' })
  mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2026-04-01',
    host: '127.0.0.1',
    port: 0,
    cf: false,
    telemetry: { enabled: false },
  })
  const response = await mf.dispatchFetch(
    `http://127.0.0.1/run?base=${encodeURIComponent(fake.baseURL)}`,
  )
  const body = await response.text()
  if (response.status !== 200) throw new Error(`worker answered ${response.status}: ${body}`)
  const parsed = JSON.parse(body) as { userAgent: string; records: CaseRecord[] }
  records = parsed.records
  userAgent = parsed.userAgent
}, 120_000)

afterAll(async () => {
  await mf?.dispose()
  await fake?.close()
})

describe('generate_object in workerd (Miniflare)', () => {
  it('ran in workerd, from a bundle without the AI SDK', () => {
    expect(userAgent).toBe('Cloudflare-Workers')
    expect(records).toHaveLength(OBJECT_CASES.length)
    expect(script).not.toMatch(/vercel\.ai\.error|@ai-sdk\/provider-utils/)
  })

  it.each(OBJECT_CASES.map((c, i) => [c.id, c, i] as const))('%s', (_id, c, i) => {
    const record = records[i]!
    expect(record.id).toBe(c.id)
    checkObjectCase(c, record, fake.requests)
  })
})
