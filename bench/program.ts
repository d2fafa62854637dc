// The program tool: start-up and per-tool-call cost of QuickJS programs, and the Worker's size.
//
// 1. Cold start: the first program of a fresh Node process (QuickJS's .wasm read, compiled and
//    instantiated), p50 over child processes; vs a first host `session.tool('noop')` there.
// 2. Warm start: a trivial program (`return 1`) in a session that has run programs, p50; vs a
//    host-direct `session.tool('noop')`.
// 3. Per-tool-call overhead: a program making 100 sequential `ctx.tool('noop')` calls, less a
//    program making none, per call; vs the same call as `session.tool('noop')` from the host.
// 4. Worker bundle: `isoagent` + a fetch handler running a program, bundled for workerd with
//    esbuild (minified, as wrangler --minify would), gzip; plus QuickJS's .wasm, gzip.
//
//   npx tsx bench/program.ts      (or `npm run bench:program`)
import { spawnSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import { Agent, memoryWorkspace, type CustomTool, type Session } from '../adapters/index.ts'
import '../adapters/node/index.ts'
import { collectGarbage, machineLine, median } from './harness.ts'

const COLD_RUNS = 9
const WARM_RUNS = 300
const CALLS = 100
const CALL_ROUNDS = 15
const GOALS = { coldMs: 30, warmMs: 2, perCallUs: 50, workerMiB: 1.5 }

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

/** In a child process: the first program's time and a first host call's, as JSON on stdout. */
async function coldChild(): Promise<void> {
  const session = await newSession()
  let t = performance.now()
  await expectOk(session.tool('noop', { n: 1 }))
  const hostMs = performance.now() - t
  t = performance.now()
  await expectOk(session.program({ source: 'return 1' }))
  const programMs = performance.now() - t
  t = performance.now()
  await expectOk(session.program({ source: 'return 2' }))
  const secondMs = performance.now() - t
  console.log(JSON.stringify({ programMs, hostMs, secondMs }))
  await session.close()
}

function cold(): { programMs: number; hostMs: number; secondMs: number } {
  const self = fileURLToPath(import.meta.url)
  const runs: { programMs: number; hostMs: number; secondMs: number }[] = []
  for (let i = 0; i < COLD_RUNS; i++) {
    const child = spawnSync(process.execPath, ['--import', 'tsx', self, '--cold-child'], {
      encoding: 'utf8',
    })
    if (child.status !== 0) throw new Error(`cold child failed: ${child.stderr}`)
    runs.push(JSON.parse(child.stdout.trim().split('\n').pop()!) as (typeof runs)[number])
  }
  return {
    programMs: median(runs.map((r) => r.programMs)),
    hostMs: median(runs.map((r) => r.hostMs)),
    secondMs: median(runs.map((r) => r.secondMs)),
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

async function workerSize(): Promise<{ jsGzip: number; wasmGzip: number; js: number }> {
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
  const js = result.outputFiles[0]!.contents
  const wasmPath = createRequire(import.meta.url).resolve(
    '@jitl/quickjs-wasmfile-release-sync/wasm',
  )
  const wasm = await readFile(wasmPath)
  return { js: js.length, jsGzip: gzipSync(js).length, wasmGzip: gzipSync(wasm).length }
}

const fmt = (n: number, digits = 2) => n.toFixed(digits)
const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`

async function main(): Promise<void> {
  if (process.argv.includes('--cold-child')) return coldChild()
  console.log(machineLine())
  const c = cold()
  const session = await newSession()
  const w = await warm(session)
  const p = await perCall(session)
  await session.close()
  const size = await workerSize()
  const total = size.jsGzip + size.wasmGzip
  const rows = [
    ['operation', 'program', 'host session.tool', 'goal'],
    [
      'cold start, first program of a process (p50 ms)',
      fmt(c.programMs),
      fmt(c.hostMs),
      `≤ ${GOALS.coldMs} ms`,
    ],
    ['second program of that process (p50 ms)', fmt(c.secondMs), '', ''],
    [
      'warm start, `return 1` (p50 ms)',
      fmt(w.programMs, 3),
      fmt(w.hostMs, 3),
      `≤ ${GOALS.warmMs} ms`,
    ],
    ['per tool call (p50 µs)', fmt(p.insideUs, 1), fmt(p.hostUs, 1), `≤ +${GOALS.perCallUs} µs`],
    ['added per tool call inside a program (µs)', fmt(p.insideUs - p.hostUs, 1), '', ''],
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
