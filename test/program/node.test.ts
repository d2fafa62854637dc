// The program suite in Node, with the loader `isoagent/node` installs (the .wasm file compiled
// once per process), plus what only Node can observe: the frozen-clock CPU limit, the pool and
// memory across 1,000 programs, open handles.
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace, importQuickJs } from '../../adapters/index.ts'
import { nodeQuickJs } from '../../adapters/node/index.ts'
import { poolFor } from '../../src/tools/program/quickjs-pool.ts'
import { runProgram } from '../../src/tools/program/run-program.ts'
import { programCases } from './program-cases.ts'

describe('program (Node, isoagent/node loader)', () => {
  for (const c of programCases) it(c.name, () => c.run({}), 120_000)
})

describe('program (Node, the default import loader)', () => {
  it(programCases[0]!.name, () => programCases[0]!.run({ quickjs: importQuickJs }), 60_000)
})

describe('program limits only Node can show', () => {
  it('the CPU limit holds by interrupt count when the clock stands still', async () => {
    const controller = new AbortController()
    const started = Date.now()
    const outcome = await runProgram(
      poolFor(nodeQuickJs),
      { source: 'for (;;) {}', filename: 'program.js', isModule: false },
      'null',
      { timeoutMs: 200, maxToolCalls: 0, maxOutputBytes: 100 },
      {
        signal: controller.signal,
        callTool: () => Promise.reject(new Error('none')),
        now: () => 0,
      },
    )
    expect(outcome.status).toBe('limit')
    expect(outcome.status === 'limit' && outcome.limit).toBe('cpu')
    expect(Date.now() - started).toBeLessThan(30_000)
  }, 60_000)
})

function gc(): void {
  setFlagsFromString('--expose-gc')
  ;(runInNewContext('gc') as () => void)()
}

describe('resource hygiene', () => {
  it('an instance a program grew is dropped, not kept idle holding its memory', async () => {
    // The pool lives wherever guests run (in each program worker on Node): driven directly here.
    const pool = poolFor(nodeQuickJs)
    const run = (source: string) =>
      runProgram(
        pool,
        { source, filename: 'program.js', isModule: false },
        'null',
        { timeoutMs: 30_000, maxToolCalls: 0, maxOutputBytes: 100 },
        { signal: new AbortController().signal, callTool: () => Promise.reject(new Error('none')) },
      )
    const small = await run('return 1')
    expect(small.status).toBe('ok')
    const kept = pool.idleCount
    expect(kept).toBeGreaterThan(0)
    const big = await run(
      'let b = new Uint8Array(40 * 1024 * 1024); b[b.length - 1] = 1; const n = b.length; b = null; return n',
    )
    expect(big.status).toBe('ok')
    expect(pool.idleCount).toBe(kept - 1)
  }, 60_000)

  it('1,000 programs in a row in one session leave memory flat and no handle open', async () => {
    const session = await Agent.create().session(memoryWorkspace({ 'a.txt': 'alpha\nbeta\n' }))
    const run = async (i: number) => {
      const r = await session.program({
        source: `const t = await ctx.readFile('a.txt')\nconst junk = new Array(1000).fill(inputs.i)\nif (inputs.i % 10 === 0) throw new Error('odd ' + inputs.i)\nreturn { n: t.length + junk.length }`,
        inputs: { i },
      })
      expect(r.exitCode).toBe(i % 10 === 0 ? 1 : 0)
    }
    for (let i = 0; i < 100; i++) await run(i)
    gc()
    const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles()
      .length
    const before = process.memoryUsage()
    for (let i = 0; i < 1000; i++) await run(i)
    gc()
    const after = process.memoryUsage()
    const grew = after.heapUsed + after.external - (before.heapUsed + before.external)
    expect(grew, `heap+external grew ${grew} bytes`).toBeLessThan(16 * 1024 * 1024)
    expect(after.rss - before.rss, 'rss').toBeLessThan(96 * 1024 * 1024)
    expect(poolFor(nodeQuickJs).idleCount).toBeLessThanOrEqual(2)
    expect(session.activeTools()).toEqual([])
    const handlesAfter = (
      process as unknown as { _getActiveHandles(): unknown[] }
    )._getActiveHandles().length
    expect(handlesAfter).toBeLessThanOrEqual(handles)
    await session.close()
  }, 300_000)
})
