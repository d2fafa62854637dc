// The program tool: start-up and per-tool-call cost of QuickJS programs, and the Worker's size.
//
// 1. Cold start: the first program of a fresh Node process (QuickJS's .wasm read, compiled and
//    instantiated, a worker thread started), p50 over child processes that import only isoagent
//    (bench/program-cold-child.ts); vs a bare quickjs-emscripten module + context + eval in a
//    child process of the same run (the goal is ≤ 1.5× that), and a first host
//    `session.tool('noop')`. Also with the runner prewarmed
//    (`nodeProgramRunner.prewarm()` at session creation), and in workerd: a new Miniflare to the
//    first response of a Worker that runs a program, vs the same Miniflare with a minimal Worker.
// 2. Warm start: a trivial program (`return 1`) in a session that has run programs, p50; vs a
//    host-direct `session.tool('noop')`.
// 3. Per-tool-call overhead: a program making 100 sequential `ctx.tool('noop')` calls, less a
//    program making none, per call; vs the same call as `session.tool('noop')` from the host.
// 4. Worker bundle: `isoagent` + a fetch handler running a program, bundled for workerd with
//    esbuild (minified, as wrangler --minify would), gzip; plus QuickJS's .wasm, gzip.
//
//   npx tsx bench/program.ts      (or `npm run bench:program`; PROGRAM_BENCH_COLD_RUNS, default 9)
import { spawnSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import { Miniflare } from 'miniflare'
import { Agent, memoryWorkspace, type CustomTool, type Session } from '../adapters/index.ts'
// The package's Node entries install the worker runner (`program-wiring.ts`); from the sources it
// takes this import, as in the cold children.
import '../adapters/node/index.ts'
import { collectGarbage, machineLine, median } from './harness.ts'

const COLD_RUNS = Number(process.env.PROGRAM_BENCH_COLD_RUNS ?? 9)
const WARM_RUNS = 300
const CALLS = 100
const CALL_ROUNDS = 15
const WORKERD_STARTS = 5
const GOALS = { coldMs: 30, coldRatio: 1.5, warmMs: 1, perCallUs: 50, workerMiB: 1.5 }

const noop: CustomTool = {
  name: 'noop',
  description: 'Returns its argument.',
  parameters: {
    type: 'object',
    additionalProperties: false,
    properties: { n: { type: 'integer' } },
  },
  scheduling: { read_only: true, idempotent: true, max_parallelism: 16 },
  run: (args) => `n=${String(args.n)}`,
}

function newSession(): Promise<Session> {
  return Agent.create().session(memoryWorkspace({ 'a.txt': 'alpha\n' }), { tools: [noop] })
}

async function expectOk(promise: Promise<{ exitCode: number; output: string }>): Promise<void> {
  const r = await promise
  if (r.exitCode !== 0) throw new Error(`bench call failed: ${r.output}`)
}

/** One cold child (bench/program-cold-child.ts: `ours`, `ours-prewarm` or `bare`); its JSON line. */
function child<T>(which: string): T {
  const script = fileURLToPath(new URL('./program-cold-child.ts', import.meta.url))
  const run = spawnSync(process.execPath, ['--import', 'tsx', script, which], { encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`${which} failed: ${run.stderr}`)
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as T
}

interface Cold {
  programMs: number
  hostMs: number
  secondMs: number
  prewarmedMs: number
  bareMs: number
  ratio: number
}

/** Cold children in rounds (bare, ours, ours prewarmed), so load changes hit every side alike. */
function cold(): Cold {
  type Run = { programMs: number; hostMs: number; secondMs: number }
  const runs: Run[] = []
  const prewarmed: Run[] = []
  const bare: number[] = []
  for (let i = 0; i < COLD_RUNS; i++) {
    bare.push(child<{ bareMs: number }>('bare').bareMs)
    runs.push(child<Run>('ours'))
    prewarmed.push(child<Run>('ours-prewarm'))
  }
  return {
    programMs: median(runs.map((r) => r.programMs)),
    hostMs: median(runs.map((r) => r.hostMs)),
    secondMs: median(runs.map((r) => r.secondMs)),
    prewarmedMs: median(prewarmed.map((r) => r.programMs)),
    bareMs: median(bare),
    ratio: median(runs.map((r, i) => r.programMs / bare[i]!)),
  }
}

async function timeEach(runs: number, op: () => Promise<void>): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    await op()
    out.push(performance.now() - t)
  }
  return out
}

async function warm(session: Session): Promise<{ programMs: number; hostMs: number }> {
  await timeEach(50, () => expectOk(session.program({ source: 'return 1' })))
  collectGarbage()
  const program = await timeEach(WARM_RUNS, () => expectOk(session.program({ source: 'return 1' })))
  collectGarbage()
  const host = await timeEach(WARM_RUNS, () => expectOk(session.tool('noop', { n: 1 })))
  return { programMs: median(program), hostMs: median(host) }
}

async function perCall(session: Session): Promise<{ insideUs: number; hostUs: number }> {
  const loop = `for (let i = 0; i < ${CALLS}; i++) await ctx.tool('noop', { n: i })\nreturn 1`
  const limits = { maxToolCalls: CALLS }
  const inside: number[] = []
  const host: number[] = []
  for (let round = 0; round < CALL_ROUNDS; round++) {
    collectGarbage()
    const [empty] = await timeEach(1, () => expectOk(session.program({ source: 'return 1' })))
    const [full] = await timeEach(1, () => expectOk(session.program({ source: loop, limits })))
    inside.push(((full! - empty!) / CALLS) * 1000)
    const [direct] = await timeEach(1, async () => {
      for (let i = 0; i < CALLS; i++) await expectOk(session.tool('noop', { n: i }))
    })
    host.push((direct! / CALLS) * 1000)
  }
  return { insideUs: median(inside), hostUs: median(host) }
}

const WORKER = `
import wasm from '@jitl/quickjs-wasmfile-release-sync/wasm'
import { Agent, memoryWorkspace } from './adapters/index.ts'
export default {
  async fetch() {
    const session = await Agent.create().session(memoryWorkspace({ 'a.txt': 'a' }), { quickjs: wasm })
    return Response.json(await session.program({ source: "return ctx.readFile('a.txt')" }))
  },
}
`

async function workerBundle(): Promise<{ code: string; wasm: Buffer }> {
  const root = fileURLToPath(new URL('..', import.meta.url))
  const result = await build({
    stdin: { contents: WORKER, resolveDir: root, sourcefile: 'worker.ts', loader: 'ts' },
    absWorkingDir: root,
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    minify: true,
    logLevel: 'silent',
    plugins: [
      {
        name: 'wasm-module',
        setup(b) {
          b.onResolve({ filter: /(\.wasm|\/wasm)$/ }, () => ({
            path: './quickjs.wasm',
            external: true,
          }))
        },
      },
    ],
  })
  const wasmPath = createRequire(import.meta.url).resolve(
    '@jitl/quickjs-wasmfile-release-sync/wasm',
  )
  return { code: result.outputFiles[0]!.text, wasm: await readFile(wasmPath) }
}

function workerSize(bundle: { code: string; wasm: Buffer }) {
  const js = Buffer.from(bundle.code)
  return { js: js.length, jsGzip: gzipSync(js).length, wasmGzip: gzipSync(bundle.wasm).length }
}

const MINIMAL_WORKER = `export default { fetch: () => new Response('1') }`

/** A new Miniflare (a fresh workerd) to its first response, and the second one's time. */
async function workerdStart(
  code: string,
  wasm: Buffer | undefined,
): Promise<{ firstMs: number; secondMs: number }> {
  const t0 = performance.now()
  const mf = new Miniflare({
    modules: [
      { type: 'ESModule', path: 'worker.js', contents: code },
      ...(wasm ? [{ type: 'CompiledWasm' as const, path: 'quickjs.wasm', contents: wasm }] : []),
    ],
    compatibilityDate: '2026-04-01',
    cf: false,
    telemetry: { enabled: false },
  })
  const check = async () => {
    const response = await mf.dispatchFetch('http://localhost/')
    const text = await response.text()
    if (!response.ok || !/"exitCode":0|^1$/.test(text)) throw new Error(`workerd: ${text}`)
  }
  try {
    await check()
    const firstMs = performance.now() - t0
    const t1 = performance.now()
    await check()
    return { firstMs, secondMs: performance.now() - t1 }
  } finally {
    await mf.dispose()
  }
}

/** Fresh workerd processes, alternating the program Worker and a minimal one. */
async function workerdCold(bundle: { code: string; wasm: Buffer }) {
  const ours: { firstMs: number; secondMs: number }[] = []
  const minimal: number[] = []
  for (let i = 0; i < WORKERD_STARTS; i++) {
    ours.push(await workerdStart(bundle.code, bundle.wasm))
    minimal.push((await workerdStart(MINIMAL_WORKER, undefined)).firstMs)
  }
  return {
    firstMs: median(ours.map((r) => r.firstMs)),
    secondMs: median(ours.map((r) => r.secondMs)),
    minimalMs: median(minimal),
  }
}

const fmt = (n: number, digits = 2) => n.toFixed(digits)
const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`

async function main(): Promise<void> {
  console.log(machineLine())
  const c = cold()
  const session = await newSession()
  const w = await warm(session)
  const p = await perCall(session)
  await session.close()
  const bundle = await workerBundle()
  const wd = await workerdCold(bundle)
  const size = workerSize(bundle)
  const total = size.jsGzip + size.wasmGzip
  const rows = [
    ['operation', 'program', 'peer', 'goal'],
    [
      'cold start, first program of a process (p50 ms); peer: first host `session.tool`',
      fmt(c.programMs),
      fmt(c.hostMs),
      `≤ ${GOALS.coldMs} ms`,
    ],
    [
      'the same vs a bare module + context + eval in a process (p50 ms, ratio)',
      `${fmt(c.ratio)}×`,
      fmt(c.bareMs),
      `≤ ${GOALS.coldRatio}×`,
    ],
    ['cold start, runner prewarmed at session creation (p50 ms)', fmt(c.prewarmedMs), '', ''],
    ['second program of that process (p50 ms)', fmt(c.secondMs), '', ''],
    [
      'warm start, `return 1` (p50 ms); peer: host `session.tool`',
      fmt(w.programMs, 3),
      fmt(w.hostMs, 3),
      `≤ ${GOALS.warmMs} ms`,
    ],
    ['per tool call (p50 µs); peer: host `session.tool`', fmt(p.insideUs, 1), fmt(p.hostUs, 1), ''],
    [
      'added per tool call inside a program (µs)',
      fmt(p.insideUs - p.hostUs, 1),
      '',
      `≤ ${GOALS.perCallUs} µs`,
    ],
    [
      'workerd: new Miniflare → first program response (p50 ms); peer: a minimal Worker',
      fmt(wd.firstMs, 0),
      fmt(wd.minimalMs, 0),
      '',
    ],
    ['workerd: the next program request (p50 ms)', fmt(wd.secondMs, 1), '', ''],
  ]
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  const line = (r: string[]) => `| ${r.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`
  console.log(line(rows[0]!))
  console.log(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`)
  for (const r of rows.slice(1)) console.log(line(r))
  console.log(
    `\nWorker bundle (isoagent + a program, minified): JS ${kib(size.js)} (${kib(size.jsGzip)} gzip) + ` +
      `QuickJS .wasm ${kib(size.wasmGzip)} gzip = ${kib(total)} gzip (goal ≤ ${GOALS.workerMiB} MiB)`,
  )
}

await main()
