// The web demo's first load: the JavaScript a page fetches before it is interactive (gzip, the
// tools listed; QuickJS and isomorphic-git must not be among it) against the 400 KB goal, and its
// time to interactive in headless Chromium (navigation start to the `isoagent-ready` mark: the
// session open and its tools listed), beside a blank Vite page built and served the same way in
// the same run. Median of several fresh browser contexts each.
//
//   npm run bench:web-demo      (builds the demo first; BENCH_LOADS=N to change the count)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { chromium, type Browser } from 'playwright-core'
import { build, preview, type PreviewServer } from 'vite'
import { machineLine, median } from './harness.ts'

const LOADS = Number(process.env.BENCH_LOADS ?? 9)
const GOAL = 400 * 1000
const LAZY = /emscripten-module|quickjs|ffi-|isomorphic-backend/
const root = fileURLToPath(new URL('../', import.meta.url))

async function servePreview(configFile: string | false, outDir?: string, dir?: string) {
  return preview({
    ...(configFile ? { configFile } : { configFile: false, root: dir }),
    ...(outDir ? { build: { outDir } } : {}),
    logLevel: 'silent',
    preview: { port: 0, host: '127.0.0.1' },
  })
}

// The peer: a blank Vite page that marks itself ready at once.
const blank = mkdtempSync(join(tmpdir(), 'isoagent-blank-vite-'))
writeFileSync(
  join(blank, 'index.html'),
  '<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>blank</title></head><body><script type="module" src="./main.js"></script></body></html>',
)
writeFileSync(
  join(blank, 'main.js'),
  "document.body.dataset.ready = 'blank'; performance.mark('isoagent-ready')\n",
)
await build({ root: blank, base: './', logLevel: 'silent', build: { outDir: join(blank, 'dist') } })

const servers: PreviewServer[] = [
  await servePreview(join(root, 'web-demo/vite.config.ts')),
  await servePreview(false, join(blank, 'dist'), blank),
]
const demoUrl = servers[0]!.resolvedUrls!.local[0]!
const blankUrl = servers[1]!.resolvedUrls!.local[0]!

interface Load {
  ttiMs: number
  jsGzip: number
  jsRaw: number
  scripts: string[]
}

async function load(browser: Browser, url: string, ready: string): Promise<Load> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  const bodies: Promise<{ url: string; bytes: Buffer }>[] = []
  page.on('response', (r) => {
    if (/\.m?js(\?|$)/.test(r.url()))
      bodies.push(r.body().then((bytes) => ({ url: r.url(), bytes })))
  })
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()))
  await page.goto(url)
  await page.waitForSelector(`body[data-ready="${ready}"]`, { state: 'attached', timeout: 30_000 })
  const ttiMs = await page.evaluate(
    () => performance.getEntriesByName('isoagent-ready')[0]?.startTime ?? Number.NaN,
  )
  const files = await Promise.all(bodies)
  await context.close()
  if (errors.length) throw new Error(`${url}: ${errors.join('; ')}`)
  return {
    ttiMs,
    jsGzip: files.reduce((n, f) => n + gzipSync(f.bytes).length, 0),
    jsRaw: files.reduce((n, f) => n + f.bytes.length, 0),
    scripts: files.map((f) => new URL(f.url).pathname.split('/').pop()!),
  }
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
})
const demo: Load[] = []
const peer: Load[] = []
try {
  // Interleaved, so both see the same machine load; one warm-up of each first.
  await load(browser, `${demoUrl}?mode=tab`, 'tab')
  await load(browser, blankUrl, 'blank')
  for (let i = 0; i < LOADS; i++) {
    demo.push(await load(browser, `${demoUrl}?mode=tab`, 'tab'))
    peer.push(await load(browser, blankUrl, 'blank'))
  }
} finally {
  await browser.close()
  await Promise.all(servers.map((s) => s.close()))
  rmSync(blank, { recursive: true, force: true })
}

const first = demo[0]!
const lazyLoaded = first.scripts.filter((s) => LAZY.test(s))
const kb = (n: number) => (n / 1000).toFixed(1)
const tti = median(demo.map((l) => l.ttiMs))
const peerTti = median(peer.map((l) => l.ttiMs))
console.log(machineLine())
console.log(`loads: ${LOADS} per page (fresh context each), after one warm-up`)
console.log('')
console.log('| page | first-load JS gzip | raw | scripts | TTI p50 ms | ratio |')
console.log('|---|---|---|---|---|---|')
console.log(
  `| web demo, this tab | ${kb(first.jsGzip)} KB (goal ≤ ${kb(GOAL)} KB: ${first.jsGzip <= GOAL ? 'held' : 'missed'}) | ${kb(first.jsRaw)} KB | ${first.scripts.length} | ${tti.toFixed(0)} | ${(tti / peerTti).toFixed(2)}× |`,
)
console.log(
  `| blank Vite page (peer) | ${kb(peer[0]!.jsGzip)} KB | ${kb(peer[0]!.jsRaw)} KB | ${peer[0]!.scripts.length} | ${peerTti.toFixed(0)} | 1.00× |`,
)
console.log('')
console.log(`first-load scripts: ${first.scripts.join(', ')}`)
console.log(
  lazyLoaded.length === 0
    ? 'QuickJS and isomorphic-git were not loaded before the page was interactive.'
    : `LOADED EARLY (should be lazy): ${lazyLoaded.join(', ')}`,
)
if (lazyLoaded.length > 0 || first.jsGzip > GOAL) process.exitCode = 1
