// web_search latency against a loopback fake engine whose results a page script inserts.
//
// 1. Browser tier, warm (browser running): `session.tool('web_search')` on the browser engine,
//    p50; vs a bare Playwright script doing the same load + extraction on the same page (a new
//    context with the same route filter, goto, wait for the results, extract, close). Goal ≤ 1.2×.
// 2. Browser tier, cold: the first search of a fresh browser (launch included), vs the bare
//    script's launch + search.
// 3. HTTP tier: the plain HTML page and the RSS feed through web_search, vs `fetch` + parsing the
//    same page with node-html-parser.
//
//   npx tsx bench/web-search.ts      (or `npm run bench:web-search`)
import { performance } from 'node:perf_hooks'
import { parse } from 'node-html-parser'
import { chromium, type Browser } from 'playwright-core'
import { Agent, memoryWorkspace } from '../adapters/index.ts'
import { playwrightBrowser } from '../adapters/playwright/index.ts'
import { startFakeEngines } from '../test/web-search/fake-engines.ts'
import { fakeEngineConfigs } from '../test/web-search/search-cases.ts'
import { machineLine, median } from './harness.ts'

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium'
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage']
const WARM_RUNS = Number(process.env.WARM_RUNS ?? 15)
const COLD_RUNS = Number(process.env.COLD_RUNS ?? 3)
const HTTP_RUNS = Number(process.env.HTTP_RUNS ?? 60)
const SEL = { result: '.result', title: '.title', url: '.title', snippet: '.snippet', skip: '.ad' }
const GOAL = 1.2

const fakes = await startFakeEngines()
const engines = fakeEngineConfigs(fakes.base)
let n = 0

async function bareSearch(browser: Browser, url: string): Promise<number> {
  const origin = new URL(url).origin
  const context = await browser.newContext({ serviceWorkers: 'block' })
  try {
    await context.route('**/*', (route) => {
      const r = route.request()
      const ok =
        new URL(r.url()).origin === origin &&
        ['document', 'script', 'xhr', 'fetch'].includes(r.resourceType())
      return ok ? route.continue() : route.abort('blockedbyclient')
    })
    const page = await context.newPage()
    await page.goto(url, { waitUntil: 'domcontentloaded' })
    await page.waitForSelector(SEL.result, { state: 'attached' })
    const rows = await page.$$eval(SEL.result, (els) =>
      els
        .filter((el) => el.closest('.ad') === null)
        .map((el) => ({
          title: el.querySelector('.title')?.textContent ?? '',
          url: (el.querySelector('.title') as HTMLAnchorElement | null)?.href ?? '',
          snippet: el.querySelector('.snippet')?.textContent ?? '',
        })),
    )
    return rows.length
  } finally {
    await context.close()
  }
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now()
  await fn()
  return performance.now() - t
}

function session(browser?: ReturnType<typeof playwrightBrowser>) {
  return Agent.create().session(memoryWorkspace(), {
    net: { allowHosts: ['127.0.0.1'] },
    webSearch: { engines, ...(browser ? { browser } : {}) },
  })
}

async function ours(s: Awaited<ReturnType<typeof session>>, engine: string): Promise<void> {
  const r = await s.tool('web_search', { query: `q${++n}`, engines: [engine] })
  if (r.exitCode !== 0) throw new Error(`web_search failed: ${r.output}`)
}

// 1. warm
const browser = playwrightBrowser({ executablePath: CHROMIUM, idleMs: 600_000 })
const warmSession = await session(browser)
const bare = await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
const url = () => `${fakes.base}/script?q=q${++n}`
for (let i = 0; i < 3; i++) {
  await ours(warmSession, 'browser')
  await bareSearch(bare, url())
}
const warmOurs: number[] = []
const warmPeer: number[] = []
for (let i = 0; i < WARM_RUNS; i++) {
  if (i % 2 === 0) {
    warmOurs.push(await time(() => ours(warmSession, 'browser')))
    warmPeer.push(await time(() => bareSearch(bare, url())))
  } else {
    warmPeer.push(await time(() => bareSearch(bare, url())))
    warmOurs.push(await time(() => ours(warmSession, 'browser')))
  }
}
await warmSession.close()
await bare.close()

// 2. cold
const coldOurs: number[] = []
const coldPeer: number[] = []
for (let i = 0; i < COLD_RUNS; i++) {
  const fresh = playwrightBrowser({ executablePath: CHROMIUM, idleMs: 700_000 + i })
  const s = await session(fresh)
  coldOurs.push(await time(() => ours(s, 'browser')))
  await s.close()
  coldPeer.push(
    await time(async () => {
      const b = await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
      await bareSearch(b, url())
      await b.close()
    }),
  )
}

// 3. HTTP tier
const httpSession = await session()
async function bareHttp(path: string): Promise<number> {
  const res = await fetch(`${fakes.base}${path}?q=q${++n}`)
  const text = await res.text()
  if (path === '/rss') {
    const feed = parse(text, { voidTag: { tags: [] } })
    return feed
      .querySelectorAll('item')
      .map((i) => [i.querySelector('title')?.text, i.querySelector('link')?.text]).length
  }
  return parse(text)
    .querySelectorAll('.result')
    .filter((el) => el.closest('.ad') === null)
    .map((el) => [
      el.querySelector('.title')?.text,
      el.querySelector('.title')?.getAttribute('href'),
    ]).length
}
const httpRows: [string, number, number][] = []
for (const [engine, path] of [
  ['html', '/html'],
  ['rss', '/rss'],
] as const) {
  const o: number[] = []
  const p: number[] = []
  for (let i = 0; i < 5; i++) {
    await ours(httpSession, engine)
    await bareHttp(path)
  }
  for (let i = 0; i < HTTP_RUNS; i++) {
    o.push(await time(() => ours(httpSession, engine)))
    p.push(await time(() => bareHttp(path)))
  }
  httpRows.push([engine, median(o), median(p)])
}
await httpSession.close()
await fakes.close()

const f = (x: number) => x.toFixed(1)
const warmRatio = median(warmOurs) / median(warmPeer)
console.log(machineLine())
console.log(
  `web_search bench, p50 ms (warm ${WARM_RUNS}, cold ${COLD_RUNS}, http ${HTTP_RUNS} runs)\n`,
)
console.log('| operation | web_search | peer | ratio | goal |')
console.log('| --- | ---: | ---: | ---: | --- |')
console.log(
  `| browser tier, warm (browser reused) | ${f(median(warmOurs))} | ${f(median(warmPeer))} (bare Playwright) | ${warmRatio.toFixed(2)}x | ≤ ${GOAL}x |`,
)
console.log(
  `| browser tier, cold (launch + search) | ${f(median(coldOurs))} | ${f(median(coldPeer))} (bare Playwright) | ${(median(coldOurs) / median(coldPeer)).toFixed(2)}x | |`,
)
for (const [engine, o, p] of httpRows)
  console.log(
    `| HTTP tier, ${engine === 'html' ? 'HTML page' : 'RSS feed'} | ${f(o)} | ${f(p)} (fetch + node-html-parser) | ${(o / p).toFixed(2)}x | |`,
  )
console.log(
  `\nwarm ours range ${f(Math.min(...warmOurs))}–${f(Math.max(...warmOurs))} ms, peer ${f(Math.min(...warmPeer))}–${f(Math.max(...warmPeer))} ms`,
)
console.log(`goal ${warmRatio <= GOAL ? 'held' : 'MISSED'}`)
