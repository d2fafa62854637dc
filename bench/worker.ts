// The Worker: its bundle size (what `wrangler deploy --dry-run` writes, gzip) against the 3 MiB
// limit of the Workers free plan (goal ≤ 1.5 MiB), the largest packages in it, and its cold
// start in workerd: from `new Miniflare` (a fresh workerd process) to the first response, and to
// the first session (a Durable Object and its workspace), median of several starts.
//
//   npx tsx bench/worker.ts      (or `npm run bench:worker`)
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { gzipSync } from 'node:zlib'
import { Miniflare } from 'miniflare'
import { COMPATIBILITY_DATE, runWorker } from '../test/http/worker-bundle.ts'
import { machineLine } from './harness.ts'

const STARTS = Number(process.env.BENCH_STARTS ?? 7)
const KiB = 1024
const MiB = 1024 * KiB
const FREE_LIMIT = 3 * MiB
const GOAL = 1.5 * MiB
const root = fileURLToPath(new URL('../', import.meta.url))
const TOKEN = 'bench-token'

const dir = mkdtempSync(join(tmpdir(), 'isoagent-worker-bench-'))
const built = performance.now()
await promisify(execFile)(
  process.execPath,
  [
    join(root, 'node_modules/wrangler/bin/wrangler.js'),
    'deploy',
    '--dry-run',
    '--outdir',
    dir,
    '--metafile',
    join(dir, 'meta.json'),
  ],
  { cwd: root, env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1' } },
)
const buildMs = performance.now() - built

const modules = readdirSync(dir).filter((f) => !f.endsWith('.map') && /\.js$|-wasm$/.test(f))
const sizes = modules.map((file) => ({
  file,
  raw: statSync(join(dir, file)).size,
  gzip: gzipSync(readFileSync(join(dir, file)), { level: 9 }).length,
}))
const raw = sizes.reduce((n, s) => n + s.raw, 0)
const gzip = sizes.reduce((n, s) => n + s.gzip, 0)

const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as {
  outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>
}
const byPackage = new Map<string, number>()
for (const output of Object.values(meta.outputs)) {
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)
    const name = m ? m[1]! : `isoagent ${input.split('/')[0]}/`
    byPackage.set(name, (byPackage.get(name) ?? 0) + bytesInOutput)
  }
}
const top = [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 10)

// QuickJS (the program tool): its .wasm module, and its JavaScript inside worker.js (gzip of that
// part estimated from its source files, compressed alone).
const isQuickJs = (input: string) => /node_modules\/(@jitl\/|quickjs-emscripten)/.test(input)
const wasm = sizes.filter((s) => s.file.endsWith('-wasm'))
const quickJsInputs = Object.values(meta.outputs).flatMap((o) =>
  Object.entries(o.inputs).filter(([input]) => isQuickJs(input)),
)
const quickJsRaw =
  wasm.reduce((n, s) => n + s.raw, 0) + quickJsInputs.reduce((n, [, i]) => n + i.bytesInOutput, 0)
const quickJsGzip =
  wasm.reduce((n, s) => n + s.gzip, 0) +
  gzipSync(Buffer.concat(quickJsInputs.map(([input]) => readFileSync(join(root, input)))), {
    level: 9,
  }).length

const bundle = { dir, script: join(dir, 'worker.js'), remove: () => {} }
interface Start {
  ready: number
  first: number
  session?: number
}
const ours: Start[] = []
const peer: Start[] = []
// Alternating with a Worker of one line per class, with the same bindings, in the same workerd:
// the ratio is the bundle's own cost.
const PEER = [
  'export class IsoagentSession { fetch() { return new Response("ok") } }',
  'export class IsoagentRegistry { fetch() { return new Response("ok") } }',
  'export default { fetch() { return new Response("ok") } }',
].join('\n')
for (let i = 0; i < STARTS; i++) {
  const t0 = performance.now()
  const worker = await runWorker(bundle, { ISOAGENT_TOKEN: TOKEN }, { r2: true })
  const t1 = performance.now()
  await (await fetch(worker.url + '/v1/health')).text()
  const t2 = performance.now()
  const created = await fetch(worker.url + '/v1/sessions', {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}` },
  })
  if (created.status !== 201) throw new Error(`session: ${created.status} ${await created.text()}`)
  await created.text()
  const t3 = performance.now()
  ours.push({ ready: t1 - t0, first: t2 - t0, session: t3 - t0 })
  await worker.close()

  const p0 = performance.now()
  const mf = new Miniflare({
    modules: true,
    script: PEER,
    compatibilityDate: COMPATIBILITY_DATE,
    durableObjects: { SESSIONS: 'IsoagentSession', REGISTRY: 'IsoagentRegistry' },
    r2Buckets: ['BUCKET'],
    host: '127.0.0.1',
    port: 0,
    cf: false,
    telemetry: { enabled: false },
  })
  const url = await mf.ready
  const p1 = performance.now()
  await (await fetch(url)).text()
  const p2 = performance.now()
  peer.push({ ready: p1 - p0, first: p2 - p0 })
  await mf.dispose()
}
rmSync(dir, { recursive: true, force: true })

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!
const kib = (n: number) => `${(n / KiB).toFixed(1)} KiB`
console.log('# Worker bundle and cold start')
console.log(machineLine())
console.log('')
console.log(
  `wrangler deploy --dry-run: ${(buildMs / 1000).toFixed(1)} s; modules: ${modules.join(', ')}`,
)
console.log('')
console.log('| bundle | raw | gzip -9 | share of 3 MiB free limit | goal ≤ 1.5 MiB |')
console.log('|---|---:|---:|---:|---|')
const row = (label: string, r: number, g: number) =>
  console.log(
    `| ${label} | ${kib(r)} | ${kib(g)} | ${((g / FREE_LIMIT) * 100).toFixed(1)}% | ${g <= GOAL ? 'met' : 'NOT met'} |`,
  )
row('with QuickJS (as deployed)', raw, gzip)
row('without QuickJS (≈: less its wasm and its JavaScript)', raw - quickJsRaw, gzip - quickJsGzip)
console.log('')
console.log('| module | raw | gzip -9 |')
console.log('|---|---:|---:|')
for (const s of sizes) console.log(`| ${s.file} | ${kib(s.raw)} | ${kib(s.gzip)} |`)
console.log(`| of which QuickJS (wasm + ≈JavaScript) | ${kib(quickJsRaw)} | ${kib(quickJsGzip)} |`)
console.log('')
console.log('| package | bytes in bundle (raw) |')
console.log('|---|---:|')
for (const [name, bytes] of top) console.log(`| ${name} | ${kib(bytes)} |`)
console.log('')
const med = (v: Start[], k: keyof Start) => median(v.map((s) => s[k] ?? 0))
console.log(
  `| cold start in workerd (Miniflare), median of ${STARTS} | isoagent ms | minimal Worker ms | ratio |`,
)
console.log('|---|---:|---:|---:|')
for (const [label, key] of [
  ['new Miniflare → ready (workerd up, script loaded)', 'ready'],
  ['new Miniflare → first response (GET /v1/health)', 'first'],
] as const) {
  const a = med(ours, key)
  const b = med(peer, key)
  console.log(`| ${label} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(a / b).toFixed(2)}x |`)
}
console.log(
  `| new Miniflare → first session (POST /v1/sessions: a Durable Object, R2) | ${med(ours, 'session').toFixed(0)} | | |`,
)
console.log(
  `| ready → first response (the request itself) | ${median(ours.map((s) => s.first - s.ready)).toFixed(0)} | ${median(peer.map((s) => s.first - s.ready)).toFixed(0)} | |`,
)
