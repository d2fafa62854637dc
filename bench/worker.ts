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
import { runWorker } from '../test/http/worker-bundle.ts'
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
let raw = 0
let gzip = 0
for (const file of modules) {
  const bytes = readFileSync(join(dir, file))
  raw += statSync(join(dir, file)).size
  gzip += gzipSync(bytes, { level: 9 }).length
}

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

const bundle = { dir, script: join(dir, 'worker.js'), remove: () => {} }
const toResponse: number[] = []
const toSession: number[] = []
for (let i = 0; i < STARTS; i++) {
  const t0 = performance.now()
  const worker = await runWorker(bundle, { ISOAGENT_TOKEN: TOKEN }, { r2: true })
  const health = await fetch(worker.url + '/v1/health')
  await health.text()
  const t1 = performance.now()
  const created = await fetch(worker.url + '/v1/sessions', {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}` },
  })
  if (created.status !== 201) throw new Error(`session: ${created.status} ${await created.text()}`)
  await created.text()
  const t2 = performance.now()
  toResponse.push(t1 - t0)
  toSession.push(t2 - t0)
  await worker.close()
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
console.log(
  `| worker (no QuickJS yet) | ${kib(raw)} | ${kib(gzip)} | ${((gzip / FREE_LIMIT) * 100).toFixed(1)}% | ${gzip <= GOAL ? 'met' : 'NOT met'} |`,
)
console.log('')
console.log('| package | bytes in bundle (raw) |')
console.log('|---|---:|')
for (const [name, bytes] of top) console.log(`| ${name} | ${kib(bytes)} |`)
console.log('')
console.log(`| cold start in workerd (Miniflare), ${STARTS} starts | median ms | min | max |`)
console.log('|---|---:|---:|---:|')
for (const [label, v] of [
  ['new Miniflare → first response (GET /v1/health)', toResponse],
  ['new Miniflare → first session (POST /v1/sessions, R2)', toSession],
] as const) {
  console.log(
    `| ${label} | ${median(v).toFixed(0)} | ${Math.min(...v).toFixed(0)} | ${Math.max(...v).toFixed(0)} |`,
  )
}
