// A deadline combined with AbortSignal.any fires even after a full GC: Node collects a bare
// AbortSignal.timeout that only a derived signal uses (and its timer with it), which once let a
// stalled download hang past its own `timeout`. Run in a child with --expose-gc.
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const repo = resolve(import.meta.dirname, '../..')

function fires(expression: string): boolean {
  const script = `
    import { timeoutSignal } from ${JSON.stringify(resolve(repo, 'src/net/timeout-signal.ts'))}
    import { withDeadline } from ${JSON.stringify(resolve(repo, 'src/net/http-failure.ts'))}
    const signal = ${expression}
    let fired = false
    signal.addEventListener('abort', () => (fired = true))
    for (let i = 0; i < 5; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 10)) }
    await new Promise((r) => setTimeout(r, 300))
    console.log(JSON.stringify(fired))`
  const child = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: repo, encoding: 'utf8' },
  )
  expect(child.status, child.stderr).toBe(0)
  return JSON.parse(child.stdout.trim()) as boolean
}

describe('deadline signals survive garbage collection', () => {
  it('timeoutSignal and withDeadline fire', () => {
    expect(fires('AbortSignal.any([new AbortController().signal, timeoutSignal(100)])')).toBe(true)
    expect(fires('withDeadline(new AbortController().signal, 100)')).toBe(true)
  })
})
