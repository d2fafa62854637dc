// web_search's HTTP/RSS and API tiers on Node against loopback fakes: extraction, cascade
// decisions, the fail-closed envelope, breaker transitions (injected clock), coalescing and
// cancellation. The same scenarios run in workerd (workerd.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, IsoagentError, memoryWorkspace, type ToolResult } from '../../adapters/index.ts'
import { startFakeEngines, type FakeEngines } from './fake-engines.ts'
import { fakeEngineConfigs, runScenarios, type ScenarioSummary } from './search-cases.ts'

let fakes: FakeEngines
let summaries: ScenarioSummary[]
const ALL = [
  'https://alpha.example/docs',
  'https://beta.example/guide',
  'https://gamma.example/notes',
  'https://delta.example/',
]

beforeAll(async () => {
  fakes = await startFakeEngines()
  summaries = await runScenarios(fakes.base)
}, 60_000)
afterAll(async () => {
  await fakes.close()
})

const scenario = (name: string): ScenarioSummary => {
  const s = summaries.find((x) => x.name === name)
  if (s === undefined) throw new Error(`no scenario ${name}`)
  return s
}

async function session(options: Record<string, unknown> = {}) {
  const { webSearch = {}, ...rest } = options as { webSearch?: Record<string, unknown> }
  return Agent.create().session(memoryWorkspace(), {
    net: { allowHosts: ['127.0.0.1'] },
    webSearch: { engines: fakeEngineConfigs(fakes.base), ...webSearch },
    ...rest,
  })
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- metadata is read loosely in assertions
const meta = (r: ToolResult) => r.metadata as Record<string, any>

describe('web_search HTTP/RSS and API tiers (Node)', () => {
  it('parses a plain HTML page: ads skipped, wrappers unwrapped, tracking and fragments dropped, duplicates merged', () => {
    const s = scenario('html page')
    expect(s).toMatchObject({ exitCode: 0, status: 'complete', urls: ALL })
    expect(s.titles[0]).toBe('Alpha again')
    expect(s.output).not.toContain('Sponsored')
    expect(s.output).not.toContain('javascript:')
  })

  it('does not see results a page script inserts (only the browser tier does)', () => {
    const s = scenario('html page, script-inserted results unseen')
    expect(s).toMatchObject({
      exitCode: 1,
      status: 'failed',
      errorType: 'retrieval_requirements_not_met',
    })
    expect(s.failures).toEqual([{ engine: 'html_script', kind: 'empty', retry_after_ms: null }])
  })

  it('reads RSS (CDATA titles reduced to text) and Atom feeds', () => {
    expect(scenario('rss feed')).toMatchObject({ status: 'complete', urls: ALL })
    expect(scenario('rss feed').titles[0]).toBe('Alpha docs rust')
    expect(scenario('atom feed')).toMatchObject({ status: 'complete', urls: ALL })
  })

  it('calls a JSON API with its key in a header, and skips it without one', () => {
    expect(scenario('json api with key')).toMatchObject({ status: 'complete', urls: ALL })
    const s = scenario('json api without key')
    expect(s).toMatchObject({ exitCode: 1, errorType: 'retrieval_requirements_not_met' })
    expect(s.tiers).toEqual([
      {
        tier: 'api',
        decision: 'skipped',
        engines: [{ engine: 'api', outcome: 'skipped', kind: 'missing_key' }],
      },
    ])
    expect(fakes.hits.some((h) => h.startsWith('/api?') && !h.includes('n='))).toBe(false)
  })

  it('runs the next tier only while the merged results miss the requirements', () => {
    const fallen = scenario('cascade: empty http tier falls to the api')
    expect(fallen).toMatchObject({ exitCode: 0, status: 'partial', urls: ALL })
    expect(fallen.tiers.map((t) => [t.tier, t.decision])).toEqual([
      ['http', 'ran'],
      ['api', 'ran'],
    ])
    const enough = scenario('cascade: http tier enough, api not needed')
    expect(enough).toMatchObject({ status: 'complete' })
    expect(enough.tiers.map((t) => [t.tier, t.decision])).toEqual([
      ['http', 'ran'],
      ['api', 'not_needed'],
    ])
    expect(scenario('partial: an engine error beside enough results')).toMatchObject({
      exitCode: 0,
      status: 'partial',
      failures: [{ engine: 'broken', kind: 'transport', retry_after_ms: null }],
    })
  })

  it('fails closed with a typed envelope when every engine fails: walls, 429 + Retry-After, 5xx, garbage, quota', () => {
    const s = scenario('fail closed: walls, limits, errors, garbage')
    expect(s).toMatchObject({
      exitCode: 1,
      status: 'failed',
      errorType: 'retrieval_requirements_not_met',
    })
    expect(Object.fromEntries(s.failures.map((f) => [f.engine, f.kind]))).toEqual({
      captcha: 'blocked',
      consent: 'blocked',
      limited: 'rate_limited',
      broken: 'transport',
      garbage: 'garbage',
      rss_garbage: 'garbage',
      api_quota: 'quota',
      api_not_json: 'garbage',
    })
    expect(s.failures.find((f) => f.engine === 'limited')?.retry_after_ms).toBe(120_000)
    const json = JSON.parse(s.output) as { error: Record<string, unknown> }
    expect(json.error.type).toBe('retrieval_requirements_not_met')
    expect(json.error.thresholds).toEqual({
      min_usable_results: 3,
      min_distinct_domains: 2,
      require_title_and_url: true,
    })
    expect(json.error.health).toMatchObject({ usable_result_count: 0, engine_errors: 8 })
    expect(json.error.retry_after_ms).toBe(120_000)
  })

  it('fails closed on too few results, listing the candidates', () => {
    const s = scenario('fail closed: too few results')
    expect(s).toMatchObject({
      exitCode: 1,
      errorType: 'retrieval_requirements_not_met',
      candidates: 1,
    })
    expect(s.output).toContain('1 usable result(s) (need 3)')
  })

  it('gives up on a slow engine at the deadline', () => {
    const s = scenario('slow engine past the deadline')
    expect(s.failures).toEqual([{ engine: 'slow', kind: 'timeout', retry_after_ms: null }])
    expect(s.output).toContain('the deadline passed')
  })

  it('answers JSON: an array of results', () => {
    const parsed = JSON.parse(scenario('json output').output) as {
      url: string
      engines: string[]
    }[]
    expect(parsed.map((r) => r.url)).toEqual(ALL.slice(0, 2))
    expect(parsed[0]!.engines).toEqual(['rss'])
  })

  it('refuses loopback engines without net.allowHosts, and private literals always', async () => {
    const s = await Agent.create().session(memoryWorkspace(), {
      webSearch: {
        engines: [
          ...fakeEngineConfigs(fakes.base),
          { name: 'meta', kind: 'rss', url: 'http://169.254.169.254/latest?q={query}' },
        ],
      },
    })
    const before = fakes.hits.length
    const r = await s.tool('web_search', { query: 'x', engines: ['rss', 'meta'] })
    expect(r.exitCode).toBe(1)
    expect(meta(r).engine_failures.map((f: { kind: string }) => f.kind)).toEqual([
      'refused',
      'refused',
    ])
    expect(fakes.hits.length).toBe(before)
    await s.close()
  })

  it('never shows an engine API key as it stands in a URL either', async () => {
    const key = 'ab/c+d==xyz1'
    const s = await Agent.create().session(memoryWorkspace(), {
      net: { allowHosts: ['127.0.0.1'] },
      webSearch: {
        engines: [
          {
            name: 'echo',
            kind: 'json',
            url: `${fakes.base}/api-echo-url?q={query}&key={key}`,
            fields: { results: 'data.items', title: 'name', url: 'link', snippet: 'text' },
          },
        ],
        apiKeys: { echo: key },
      },
    })
    const r = await s.tool('web_search', { query: 'k' })
    expect(r.exitCode).toBe(0)
    expect(r.output).toContain('asked /api-echo-url')
    expect(JSON.stringify(r)).not.toContain(encodeURIComponent(key))
    expect(JSON.stringify(r)).not.toContain(key)
    await s.close()
  })

  it('never shows an engine API key, even when the engine echoes it', async () => {
    const key = 'sk-live-0123456789abcdef'
    const s = await Agent.create().session(memoryWorkspace(), {
      net: { allowHosts: ['127.0.0.1'] },
      webSearch: {
        engines: [
          {
            name: 'echo',
            kind: 'json',
            url: `${fakes.base}/api-echo?q={query}`,
            headers: { 'x-api-key': '{key}' },
            fields: { results: 'data.items', title: 'name', url: 'link', snippet: 'text' },
          },
        ],
        apiKeys: { echo: key },
      },
    })
    const r = await s.tool('web_search', { query: 'k' })
    expect(r.exitCode).toBe(0)
    expect(r.output).toContain('[REDACTED]')
    expect(JSON.stringify(r)).not.toContain(key)
    expect(JSON.stringify(r.metadata)).not.toContain(key)
    await s.close()
  })

  it('rejects bad arguments and bad options with typed errors', async () => {
    const s = await session()
    for (const args of [
      {},
      { query: '' },
      { query: 'x', limit: 0 },
      { query: 'x', limit: 51 },
      { query: 'x', timeout: 61 },
      { query: 'x', format: 'xml' },
      { query: 'x', engines: ['nope'] },
      { query: 'x', engine: 'html' },
      { query: '   ' },
    ]) {
      const r = await s.tool('web_search', args)
      expect(r.exitCode, JSON.stringify(args)).toBe(1)
      expect(r.errorKind?.type, JSON.stringify(args)).toBe('invalid_argument')
    }
    await s.close()
    const bad = [
      { webSearch: { engines: [] } },
      { webSearch: { engines: [{ name: 'x', kind: 'html', url: 'http://a/?q={query}' }] } },
      { webSearch: { engines: [{ name: 'x', kind: 'rss', url: 'ftp://a/{query}' }] } },
      { webSearch: { engines: [{ name: 'x', kind: 'json', url: 'http://a/?q={query}' }] } },
      { webSearch: { browser: {} } },
      { webSearch: { apiKeys: { a: 1 } } },
      { webSearch: { unknown: true } },
      { net: { allowHosts: 'x' } },
    ]
    for (const options of bad) {
      await expect(Agent.create().session(memoryWorkspace(), options as never)).rejects.toSatisfy(
        (e: unknown) => IsoagentError.is(e, 'invalid_argument'),
      )
    }
  })
})

describe('web_search circuit breaker (injected clock)', () => {
  it('opens on a 429 for its Retry-After, goes half-open after it, closes on a good probe', async () => {
    let now = 1_000_000
    const s = await session({ webSearch: { breaker: { now: () => now } } })
    const states = (r: ToolResult) => meta(r).circuit_breakers.limited.state
    const first = await s.tool('web_search', { query: 'a', engines: ['limited'] })
    expect(states(first)).toBe('open')
    expect(meta(first).circuit_breakers.limited.retry_after_ms).toBe(120_000)
    const hits = fakes.count('/429')
    const second = await s.tool('web_search', { query: 'b', engines: ['limited'] })
    expect(meta(second).engine_failures[0]).toMatchObject({
      kind: 'circuit_open',
      retry_after_ms: 120_000,
    })
    expect(fakes.count('/429')).toBe(hits)
    now += 120_000
    const probe = await s.tool('web_search', { query: 'c', engines: ['limited'] })
    expect(fakes.count('/429')).toBe(hits + 1)
    expect(meta(probe).tiers[0].engines[0].probe).toBe(true)
    expect(states(probe)).toBe('open')
    await s.close()
  })

  it('opens after repeated transport errors and repeated empties, not after one; a probe success closes it', async () => {
    let now = 0
    const s = await session({ webSearch: { breaker: { now: () => now, openMs: 10_000 } } })
    const state = async (engine: string) =>
      meta(await s.tool('web_search', { query: `q${now}${Math.random()}`, engines: [engine] }))
        .circuit_breakers[engine]
    expect((await state('broken')).state).toBe('closed')
    expect((await state('broken')).state).toBe('open')
    expect((await state('empty')).state).toBe('closed')
    expect((await state('empty')).state).toBe('closed')
    expect((await state('empty')).state).toBe('open')
    now += 10_000
    expect((await s.tool('web_search', { query: 'z', engines: ['html'] })).exitCode).toBe(0)
    const snap = meta(await s.tool('web_search', { query: 'zz', engines: ['broken'] }))
      .circuit_breakers.broken
    expect(snap).toMatchObject({ state: 'open', trips: 2 })
    await s.close()
  })
})

describe('web_search coalescing and cancellation', () => {
  it('shares one run between concurrent identical requests (leader, shared), not between different ones', async () => {
    const s = await session()
    fakes.setDelay('/rss', 300)
    const before = fakes.count('/rss')
    const [a, b, c] = await Promise.all([
      s.tool('web_search', { query: 'same', engines: ['rss'] }),
      s.tool('web_search', { query: 'same', engines: ['rss'], format: 'json' }),
      s.tool('web_search', { query: 'other', engines: ['rss'] }),
    ])
    fakes.setDelay('/rss', 0)
    expect(fakes.count('/rss') - before).toBe(2)
    expect(meta(a!).search_coalescing.role).toBe('leader')
    expect(meta(b!).search_coalescing.role).toBe('shared')
    expect(meta(c!).search_coalescing.role).toBe('leader')
    expect(meta(b!).search_coalescing.shared_requests).toBe(1)
    expect(b!.output.startsWith('[')).toBe(true)
    await s.close()
  })

  it('lets a waiter abandon without stopping the others; the run stops when all have left', async () => {
    const s = await session()
    fakes.setDelay('/rss', 400)
    const leaving = new AbortController()
    const staying = s.tool('web_search', { query: 'abandon', engines: ['rss'] })
    const gone = s.tool(
      'web_search',
      { query: 'abandon', engines: ['rss'] },
      { signal: leaving.signal },
    )
    setTimeout(() => leaving.abort(), 100)
    const [kept, left] = await Promise.all([staying, gone])
    fakes.setDelay('/rss', 0)
    expect(left.errorKind?.type).toBe('cancelled')
    expect(kept.exitCode).toBe(0)
    expect(meta(kept).search_coalescing.abandoned_requests).toBe(1)
    await s.close()
  })

  it('is cancelled mid-search quickly', async () => {
    const s = await session()
    const controller = new AbortController()
    const started = Date.now()
    const pending = s.tool(
      'web_search',
      { query: 'slow', engines: ['slow'], timeout: 30 },
      { signal: controller.signal },
    )
    setTimeout(() => controller.abort(), 200)
    const r = await pending
    expect(r.errorKind?.type).toBe('cancelled')
    expect(Date.now() - started).toBeLessThan(3_000)
    await s.close()
  })
})
