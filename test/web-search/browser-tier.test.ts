// web_search's browser tier: Chromium through isoagent/playwright against loopback fakes whose
// results a page script inserts; request routing, walls, the page bulkhead, a killed browser
// replaced, and no browser process left once the last session has closed.
import { execFileSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace, type ToolResult } from '../../adapters/index.ts'
import { playwrightBrowser } from '../../adapters/playwright/index.ts'
import { startFakeEngines, type FakeEngines } from './fake-engines.ts'
import { fakeEngineConfigs } from './search-cases.ts'

const CHROMIUM = '/usr/bin/chromium'
let fakes: FakeEngines
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- metadata is read loosely in assertions
const meta = (r: ToolResult) => r.metadata as Record<string, any>

beforeAll(async () => {
  fakes = await startFakeEngines()
})
afterAll(async () => {
  await fakes.close()
})

/** Chromium processes below this test process. */
function chromiumChildren(): number[] {
  let out: string
  try {
    out = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,comm='], { encoding: 'utf8' })
  } catch {
    return []
  }
  const rows = out
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .map(([pid, ppid, comm]) => ({ pid: Number(pid), ppid: Number(ppid), comm: comm ?? '' }))
  const below = new Set([process.pid])
  let grew = true
  while (grew) {
    grew = false
    for (const r of rows)
      if (below.has(r.ppid) && !below.has(r.pid)) {
        below.add(r.pid)
        grew = true
      }
  }
  return rows
    .filter((r) => r.pid !== process.pid && below.has(r.pid) && /chrom/i.test(r.comm))
    .map((r) => r.pid)
}

async function until(check: () => boolean, ms = 5_000): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (check()) return true
    await new Promise((r) => setTimeout(r, 50))
  }
  return check()
}

function engines() {
  const all = fakeEngineConfigs(fakes.base)
  const sel = all.find((e) => e.name === 'browser')!.selectors!
  return [
    ...all,
    {
      name: 'browser_captcha',
      kind: 'browser' as const,
      url: `${fakes.base}/captcha?q={query}`,
      selectors: sel,
    },
    {
      name: 'browser_limited',
      kind: 'browser' as const,
      url: `${fakes.base}/429?q={query}`,
      selectors: sel,
    },
  ]
}

describe('web_search browser tier (Chromium via isoagent/playwright)', () => {
  it('sees results a page script inserts, loads only same-origin documents, scripts and XHR, and skips ads', async () => {
    const browser = playwrightBrowser({ executablePath: CHROMIUM, idleMs: 30_001 })
    const s = await Agent.create().session(memoryWorkspace(), {
      net: { allowHosts: ['127.0.0.1'] },
      webSearch: { engines: engines(), browser },
    })
    const before = fakes.hits.length
    const r = await s.tool('web_search', { query: 'tokio', engines: ['browser'] })
    expect(r.exitCode, r.output).toBe(0)
    expect(meta(r).status).toBe('complete')
    expect(meta(r).results.map((x: { url: string }) => x.url)).toEqual([
      'https://alpha.example/docs',
      'https://beta.example/guide',
      'https://gamma.example/notes',
      'https://delta.example/',
    ])
    expect(meta(r).results[0].title).toBe('Alpha docs tokio')
    expect(r.output).not.toContain('Buy now')
    const seen = fakes.hits.slice(before).map((h) => h.split('?')[0])
    expect(seen).toContain('/script')
    expect(seen).toContain('/results.js')
    expect(seen).toContain('/data.json')
    for (const refused of ['/style.css', '/pixel.png', '/cross.js', '/cross.png'])
      expect(seen).not.toContain(refused)
    await s.close()
  }, 60_000)

  it('cascades: a complete browser tier leaves the HTTP tier unasked; a wall or a 429 falls through to it', async () => {
    const browser = playwrightBrowser({ executablePath: CHROMIUM, idleMs: 30_002 })
    const s = await Agent.create().session(memoryWorkspace(), {
      net: { allowHosts: ['127.0.0.1'] },
      webSearch: { engines: engines(), browser },
    })
    const htmlHits = fakes.count('/rss')
    const r = await s.tool('web_search', { query: 'a', engines: ['browser', 'rss'] })
    expect(
      meta(r).tiers.map((t: { tier: string; decision: string }) => [t.tier, t.decision]),
    ).toEqual([
      ['browser', 'ran'],
      ['http', 'not_needed'],
    ])
    expect(fakes.count('/rss')).toBe(htmlHits)
    const started = Date.now()
    const walled = await s.tool('web_search', {
      query: 'b',
      engines: ['browser_captcha', 'browser_limited', 'rss'],
    })
    // A wall falls through at once, not at the search's 30 s deadline (15 s leaves room for a
    // loaded CI machine; the two browser pages take ~1–3 s idle).
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(walled.exitCode).toBe(0)
    expect(meta(walled).status).toBe('partial')
    const kinds = Object.fromEntries(
      meta(walled).engine_failures.map((f: { engine: string; kind: string }) => [f.engine, f.kind]),
    )
    expect(kinds).toEqual({ browser_captcha: 'blocked', browser_limited: 'rate_limited' })
    expect(meta(walled).engine_failures[1].retry_after_ms).toBe(120_000)
    expect(meta(walled).tiers.map((t: { decision: string }) => t.decision)).toEqual(['ran', 'ran'])
    await s.close()
  }, 60_000)

  it('bounds concurrent pages (bulkhead): with one page, searches wait their turn', async () => {
    const browser = playwrightBrowser({ executablePath: CHROMIUM, idleMs: 30_003, maxPages: 1 })
    const s = await Agent.create().session(memoryWorkspace(), {
      net: { allowHosts: ['127.0.0.1'] },
      webSearch: { engines: engines(), browser },
    })
    const results = await Promise.all(
      ['x', 'y', 'z'].map((q) => s.tool('web_search', { query: q, engines: ['browser'] })),
    )
    expect(results.map((r) => r.exitCode)).toEqual([0, 0, 0])
    const waits = results.map((r) => meta(r).tiers[0].engines[0].page_wait_ms as number)
    expect(Math.max(...waits)).toBeGreaterThan(0)
    await s.close()
  }, 60_000)

  it('replaces a killed browser, and leaves no browser process after the last session closes', async () => {
    const browser = playwrightBrowser({ executablePath: CHROMIUM, idleMs: 30_004 })
    const options = {
      net: { allowHosts: ['127.0.0.1'] },
      webSearch: { engines: engines(), browser },
    }
    const one = await Agent.create().session(memoryWorkspace(), options)
    const two = await Agent.create().session(memoryWorkspace(), options)
    expect((await one.tool('web_search', { query: 'k1', engines: ['browser'] })).exitCode).toBe(0)
    expect(browser.launches).toBe(1)
    const pids = chromiumChildren()
    expect(pids.length).toBeGreaterThan(0)
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // already gone with its parent
      }
    }
    const again = await one.tool('web_search', { query: 'k2', engines: ['browser'] })
    expect(again.exitCode, again.output).toBe(0)
    expect(browser.launches).toBe(2)
    expect((await two.tool('web_search', { query: 'k3', engines: ['browser'] })).exitCode).toBe(0)
    await one.close()
    expect(browser.running).toBe(true)
    await two.close()
    expect(browser.running).toBe(false)
    expect(await until(() => chromiumChildren().length === 0)).toBe(true)
  }, 60_000)

  it('closes an idle browser and launches it again on the next search', async () => {
    const browser = playwrightBrowser({ executablePath: CHROMIUM, idleMs: 300 })
    const s = await Agent.create().session(memoryWorkspace(), {
      net: { allowHosts: ['127.0.0.1'] },
      webSearch: { engines: engines(), browser },
    })
    expect(browser.running).toBe(false)
    expect((await s.tool('web_search', { query: 'i1', engines: ['browser'] })).exitCode).toBe(0)
    expect(browser.running).toBe(true)
    expect(await until(() => !browser.running)).toBe(true)
    expect((await s.tool('web_search', { query: 'i2', engines: ['browser'] })).exitCode).toBe(0)
    expect(browser.launches).toBe(2)
    await s.close()
    expect(browser.running).toBe(false)
  }, 60_000)

  it('is cancelled mid-search with the page closed', async () => {
    const browser = playwrightBrowser({ executablePath: CHROMIUM, idleMs: 30_005 })
    const s = await Agent.create().session(memoryWorkspace(), {
      net: { allowHosts: ['127.0.0.1'] },
      webSearch: { engines: engines(), browser },
    })
    fakes.setDelay('/script', 5_000)
    const controller = new AbortController()
    const started = Date.now()
    const pending = s.tool(
      'web_search',
      { query: 'c', engines: ['browser'] },
      { signal: controller.signal },
    )
    setTimeout(() => controller.abort(), 1_000)
    const r = await pending
    fakes.setDelay('/script', 0)
    expect(r.errorKind?.type).toBe('cancelled')
    expect(Date.now() - started).toBeLessThan(4_000)
    await s.close()
    expect(await until(() => chromiumChildren().length === 0)).toBe(true)
  }, 60_000)
})
