// Issue 27, "Listener leak": many concurrent calls in one session must not pile listeners onto one
// AbortSignal (Node prints `MaxListenersExceededWarning` past 10). Each call's listeners are
// scoped to it and removed when it settles.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace } from '../../adapters/index.ts'

let warnings: Error[] = []
const onWarning = (w: Error) => warnings.push(w)
beforeEach(() => {
  warnings = []
  process.on('warning', onWarning)
})
afterEach(() => {
  process.off('warning', onWarning)
})

/** Warnings are emitted on a later tick: let them arrive before looking. */
const settle = () => new Promise((r) => setTimeout(r, 50))
const listenerWarnings = () =>
  warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)

describe('no listener pile-up on one AbortSignal', () => {
  it('200 parallel edits in one session print no MaxListenersExceededWarning', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 200; i++) files[`f${i}.txt`] = `value ${i}\n`
    const session = await Agent.create().session(memoryWorkspace(files))
    const signal = new AbortController().signal
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        session.tool(
          'edit',
          { file_path: `f${i}.txt`, old_string: `value ${i}`, new_string: `edited ${i}` },
          { signal },
        ),
      ),
    )
    expect(results.filter((r) => r.exitCode !== 0)).toEqual([])
    expect((await session.readFile('f199.txt')).includes('edited 199')).toBe(true)
    await settle()
    expect(listenerWarnings()).toEqual([])
    await session.close()
  }, 60_000)

  it('32 edits in one batch (its most) print no MaxListenersExceededWarning', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 32; i++) files[`f${i}.txt`] = `value ${i}\n`
    const session = await Agent.create().session(memoryWorkspace(files))
    const invocations = Array.from({ length: 32 }, (_, i) => ({
      tool: 'edit',
      args: { file_path: `f${i}.txt`, old_string: `value ${i}`, new_string: `edited ${i}` },
    }))
    const result = await session.tool('batch', { invocations, max_concurrency: 16 })
    expect(result.exitCode, result.output).toBe(0)
    await settle()
    expect(listenerWarnings()).toEqual([])
    await session.close()
  }, 60_000)

  it('10,000 concurrent ctx calls in a program print no MaxListenersExceededWarning', async () => {
    const session = await Agent.create().session(memoryWorkspace({ 'a.txt': 'a\n' }))
    const result = await session.program({
      source:
        'const calls = []; for (let i = 0; i < 10000; i++) calls.push(ctx.tool("ls", { path: "." })); ' +
        'const done = await Promise.all(calls); return done.filter((r) => r.exitCode === 0).length',
      limits: { maxToolCalls: 10_000, timeoutMs: 120_000 },
    })
    expect(result.exitCode, result.output).toBe(0)
    expect(result.output).toContain('10000')
    await settle()
    expect(listenerWarnings()).toEqual([])
    await session.close()
  }, 180_000)
})
