// The web demo's first load, in both modes ("this tab" and "server", served by the built
// `isoagent serve` on loopback): the JavaScript a page fetches before it is interactive (gzip;
// the scripts whose request started before the `isoagent-ready` mark, when the session is open
// and its tools listed; QuickJS, isomorphic-git and CodeMirror must not be among it), asserted
// against the 400 KB budget per mode; then what the page has fetched once README.md is open in
// the editor, highlighted (CodeMirror and its Markdown language, loaded on demand: shown, not
// budgeted); and the time to interactive in headless Chromium, beside a blank Vite page built
// and served the same way in the same run. Median of several fresh browser contexts each (a
// fresh context is a first visit: the tab seeds the sample project).
//
//   npm run bench:web-demo      (builds first; BENCH_LOADS=N to change the count)
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { chromium, type Browser } from 'playwright-core'
import { build, preview, type PreviewServer } from 'vite'
import { startDemoServer } from '../test/web-demo/demo-harness.ts'
import { machineLine, median } from './harness.ts'

const LOADS = Number(process.env.BENCH_LOADS ?? 9)
const GOAL = 400 * 1000
const LAZY = /emscripten-module|quickjs|ffi-|isomorphic-backend|code-editor|merge-review|CodeMirror/
/** CodeMirror's base theme: a script holding it is the editor, whatever its chunk is named. */
const CODEMIRROR = 'cm-scroller'
const root = fileURLToPath(new URL('../', import.meta.url))

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

const peerServer: PreviewServer = await preview({
  configFile: false,
  root: blank,
  build: { outDir: join(blank, 'dist') },
  logLevel: 'silent',
  preview: { port: 0, host: '127.0.0.1' },
})
const blankUrl = peerServer.resolvedUrls!.local[0]!
// The demo as `npm start` serves it: the built CLI over a copy of the sample project.
const workspace = mkdtempSync(join(tmpdir(), 'isoagent-bench-demo-'))
cpSync(join(root, 'examples/sample-project'), workspace, { recursive: true })
const server = await startDemoServer(['--workspace', workspace])

interface Load {
  ttiMs: number
  /** Scripts requested before the ready mark: the first load. */
  jsGzip: number
  jsRaw: number
  scripts: string[]
  /** Every script fetched once README.md is open in the editor, highlighted. */
  editorGzip: number
  editorScripts: string[]
}

const gzipOf = (files: { bytes: Buffer }[]) =>
  files.reduce((n, f) => n + gzipSync(f.bytes).length, 0)
const nameOf = (url: string) => new URL(url).pathname.split('/').pop()!

async function load(
  browser: Browser,
  url: string,
  ready: string,
  editor = ready !== 'blank',
): Promise<Load> {
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
  const { ttiMs, early } = await page.evaluate(() => {
    const at = performance.getEntriesByName('isoagent-ready')[0]?.startTime ?? Number.NaN
    const scripts = performance
      .getEntriesByType('resource')
      .filter((r) => r.startTime <= at && /\.m?js(\?|$)/.test(r.name))
      .map((r) => r.name)
    return { ttiMs: at, early: scripts }
  })
  if (editor)
    await page.waitForSelector('#editor[data-language="markdown"]', {
      state: 'attached',
      timeout: 30_000,
    })
  const files = await Promise.all(bodies)
  await context.close()
  if (errors.length) throw new Error(`${url}: ${errors.join('; ')}`)
  const first = files.filter((f) => early.includes(f.url))
  return {
    ttiMs,
    jsGzip: gzipOf(first),
    jsRaw: first.reduce((n, f) => n + f.bytes.length, 0),
    scripts: first.map((f) =>
      f.bytes.includes(CODEMIRROR) ? `${nameOf(f.url)} (CodeMirror)` : nameOf(f.url),
    ),
    editorGzip: gzipOf(files),
    editorScripts: files.map((f) => nameOf(f.url)),
  }
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
})
const modes = ['tab', 'server'] as const
const demo: Record<(typeof modes)[number], Load[]> = { tab: [], server: [] }
const peer: Load[] = []
try {
  // Interleaved, so all see the same machine load; one warm-up of each first.
  for (const mode of modes) await load(browser, server.pageUrl(mode), mode)
  await load(browser, blankUrl, 'blank')
  for (let i = 0; i < LOADS; i++) {
    for (const mode of modes) demo[mode].push(await load(browser, server.pageUrl(mode), mode))
    peer.push(await load(browser, blankUrl, 'blank'))
  }
} finally {
  await browser.close()
  await peerServer.close()
  await server.stop()
  rmSync(blank, { recursive: true, force: true })
  rmSync(workspace, { recursive: true, force: true })
}

const kb = (n: number) => (n / 1000).toFixed(1)
const peerTti = median(peer.map((l) => l.ttiMs))
console.log(machineLine())
console.log(`loads: ${LOADS} per page (fresh context each: a first visit), after one warm-up`)
console.log('')
console.log(
  '| page | first-load JS gzip (budget ≤ 400 KB) | raw | scripts | with the editor open | TTI p50 ms | ratio |',
)
console.log('|---|---|---|---|---|---|---|')
let failed = false
for (const mode of modes) {
  const first = demo[mode][0]!
  const tti = median(demo[mode].map((l) => l.ttiMs))
  const held = first.jsGzip <= GOAL
  const lazy = first.scripts.filter((s) => LAZY.test(s))
  if (!held || lazy.length > 0) failed = true
  console.log(
    `| web demo, ${mode === 'tab' ? 'this tab' : 'server'} | ${kb(first.jsGzip)} KB (${held ? 'held' : 'MISSED'}) | ${kb(first.jsRaw)} KB | ${first.scripts.length} | ${kb(first.editorGzip)} KB, ${first.editorScripts.length} scripts | ${tti.toFixed(0)} | ${(tti / peerTti).toFixed(2)}× |`,
  )
}
console.log(
  `| blank Vite page (peer) | ${kb(peer[0]!.jsGzip)} KB | ${kb(peer[0]!.jsRaw)} KB | ${peer[0]!.scripts.length} | | ${peerTti.toFixed(0)} | 1.00× |`,
)
console.log('')
for (const mode of modes) {
  const first = demo[mode][0]!
  const lazy = first.scripts.filter((s) => LAZY.test(s))
  console.log(`${mode}: first-load scripts: ${first.scripts.join(', ')}`)
  console.log(
    lazy.length === 0
      ? `${mode}: QuickJS, isomorphic-git and CodeMirror were not loaded before the page was interactive.`
      : `${mode}: LOADED EARLY (should be lazy): ${lazy.join(', ')}`,
  )
}
if (failed) {
  console.log('FAILED: a first load is over the 400 KB gzip budget or loaded a lazy part early')
  process.exitCode = 1
}
