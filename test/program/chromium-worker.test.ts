// Program guests in a Web Worker (Debian Chromium, playwright-core): the page imports
// `isoagent/browser` (bundled for the browser, Node built-ins forbidden), which runs guests in
// module workers started from `program-worker.js` beside the bundle (served here as a bundle of
// adapters/browser/program-worker.ts, as a bundler emits it). A guest stuck in a C loop of
// QuickJS is stopped by terminating its worker while the page's own timer keeps ticking, and the
// next program runs; the whole program suite passes through the worker; a worker that cannot
// start leaves programs running in the page with native-loop bounds.
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHROMIUM, MISSING_CHROMIUM } from '../runtime/chromium-launch.ts'
import { bundle, nodeSpecifiers } from '../runtime/bundle.ts'
import { HOSTILE } from './hostile-cases.ts'
import { programCases } from './program-cases.ts'
import { openProgramPage, type ProgramPage } from './program-page.ts'

const ENTRY = `
import {
  Agent,
  browserProgramRunner,
  createBrowserProgramRunner,
  memoryWorkspace,
  quickJsFromModule,
  setDefaultProgramRunner,
} from '../../adapters/browser/index.ts'
import { runProgramCases } from './program-cases.ts'

let compiled
const session = await Agent.create().session(memoryWorkspace({ 'a.txt': 'alpha\\n' }))

globalThis.runProgramCase = async (name, loader) => {
  let env = { smallHostStack: true }
  if (loader === 'compiled') {
    compiled ??= WebAssembly.compileStreaming(fetch('/emscripten-module.wasm'))
    env = { ...env, quickjs: quickJsFromModule(await compiled) }
  }
  return runProgramCases(env, (c) => c.name === name)
}

/** Run one program while a 20 ms page timer records how late it fires. */
globalThis.programWithLag = async (source, timeoutMs) => {
  let last = performance.now()
  let lagMs = 0
  let ticks = 0
  const timer = setInterval(() => {
    const now = performance.now()
    lagMs = Math.max(lagMs, now - last - 20)
    last = now
    ticks++
  }, 20)
  const started = performance.now()
  const result = await session.program({ source, limits: { timeoutMs } })
  const elapsedMs = performance.now() - started
  clearInterval(timer)
  return { result, elapsedMs, lagMs, ticks, stats: browserProgramRunner.stats() }
}

/** Programs through a runner whose worker script is missing: they run in the page. */
globalThis.withMissingWorker = async (sources) => {
  const runner = createBrowserProgramRunner({
    createWorker: () => new Worker('/no-such-worker.js', { type: 'module' }),
  })
  setDefaultProgramRunner(runner)
  try {
    const results = []
    for (const source of sources) results.push(await session.program({ source, limits: { timeoutMs: 5000 } }))
    return { results, stats: runner.stats() }
  } finally {
    setDefaultProgramRunner(browserProgramRunner)
  }
}
globalThis.ready = true
`

interface ToolReply {
  output: string
  exitCode: number
  errorKind?: { type: string }
  metadata?: { value?: unknown }
}

interface LagRun {
  result: ToolReply
  elapsedMs: number
  lagMs: number
  ticks: number
  stats: { busy: number; idle: number; spawned: number; terminated: number; fallback: boolean }
}

it(`has Debian Chromium at ${CHROMIUM}`, () => {
  expect(existsSync(CHROMIUM), MISSING_CHROMIUM).toBe(true)
})

describe('program in a Web Worker (Chromium)', () => {
  let opened: ProgramPage | undefined
  let workerCode = ''
  const at = () => opened!

  beforeAll(async () => {
    workerCode = await bundle({ entry: 'adapters/browser/program-worker.ts', target: 'browser' })
    opened = await openProgramPage({
      entry: ENTRY,
      title: 'isoagent program worker',
      readyGlobal: 'ready',
      scripts: { '/program-worker.js': workerCode },
    })
  }, 120_000)

  afterAll(async () => {
    await opened?.close()
  })

  it('bundles the page and the worker with no Node built-in', () => {
    expect(nodeSpecifiers(at().code)).toEqual([])
    expect(nodeSpecifiers(workerCode)).toEqual([])
    expect(at().code).toContain('program-worker.js')
  })

  const lagRun = (source: string, timeoutMs: number): Promise<LagRun> =>
    at().page.evaluate(
      ([s, t]) =>
        (
          globalThis as unknown as { programWithLag(s: string, t: number): Promise<LagRun> }
        ).programWithLag(s, t),
      [source, timeoutMs] as const,
    )

  it('a first program runs in a worker', async () => {
    const run = await lagRun("return await ctx.readFile('a.txt')", 10_000)
    expect(run.result.exitCode, run.result.output).toBe(0)
    expect(run.result.output).toBe('     1\talpha')
    expect(run.stats.spawned).toBeGreaterThanOrEqual(1)
    expect(at().requests).toContain('/program-worker.js')
  }, 60_000)

  for (const source of HOSTILE) {
    it(`${source}: a typed timeout at 1000 ms, the page's timer ticking`, async () => {
      const before = (await lagRun('return 1', 10_000)).stats.terminated
      const run = await lagRun(source, 1000)
      expect(run.result.exitCode).toBe(1)
      expect(run.result.errorKind?.type, run.result.output).toBe('timeout')
      expect(run.elapsedMs).toBeGreaterThanOrEqual(900)
      expect(run.elapsedMs).toBeLessThan(5_000)
      expect(run.lagMs, 'page timer lag').toBeLessThan(250)
      expect(run.ticks).toBeGreaterThanOrEqual(30)
      expect(run.stats.terminated).toBe(before + 1)
      // The next program runs (in a fresh worker).
      const next = await lagRun('return 6 * 7', 10_000)
      expect(next.result.output).toBe('42')
    }, 60_000)
  }

  for (const c of programCases) {
    it(`suite in the worker: ${c.name}`, async () => {
      const result = await at().runCase(c.name)
      expect(result.error ?? '').toBe('')
      expect(result.ok).toBe(true)
    }, 300_000)
  }

  it('a module the page compiled itself is posted to the workers', async () => {
    const result = await at().runCase(programCases[0]!.name, 'compiled')
    expect(result.error ?? '').toBe('')
    expect(at().pageErrors).toEqual([])
  }, 60_000)

  it('a worker that cannot start: programs run in the page, native loops bounded', async () => {
    const { results, stats } = await at().page.evaluate(
      (sources) =>
        (
          globalThis as unknown as {
            withMissingWorker(
              s: string[],
            ): Promise<{ results: ToolReply[]; stats: LagRun['stats'] }>
          }
        ).withMissingWorker(sources),
      ['return 1', HOSTILE[0], 'return 2'],
    )
    expect(stats.fallback).toBe(true)
    expect(results[0]!.output).toBe('1')
    // In the page the hostile call meets the native-loop bound: a RangeError at once.
    expect(results[1]!.errorKind?.type).toBe('invalid_argument')
    expect(results[1]!.output).toMatch(/RangeError/)
    expect(results[2]!.output).toBe('2')
  }, 60_000)
})
