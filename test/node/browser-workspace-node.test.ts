import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

const roots: string[] = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

/** Run `body` as an ES module in a fresh plain Node process (no fake-indexeddb, no navigator). */
function runInPlainNode(body: string) {
  const root = mkdtempSync(join(tmpdir(), 'isoagent-browser-node-'))
  roots.push(root)
  const script = join(root, 'host.mts')
  writeFileSync(script, body)
  return spawnSync(process.execPath, ['--import', 'tsx', script], {
    encoding: 'utf8',
    timeout: 60_000,
  })
}

describe('browserWorkspace where there is no IndexedDB', () => {
  it('is a typed unsupported error at creation and on resume, and the process exits cleanly', () => {
    const entry = fileURLToPath(new URL('../../adapters/browser/index.ts', import.meta.url))
    const run = runInPlainNode(`
import { Agent, browserWorkspace, IsoagentError, memoryWorkspace } from ${JSON.stringify(entry)}
if (typeof indexedDB !== 'undefined') throw new Error('this test needs a runtime without IndexedDB')
const caught = async (make) => {
  try {
    await make()
    return 'no error'
  } catch (error) {
    return { typed: error instanceof IsoagentError, code: error.code, message: error.message }
  }
}
const created = await caught(() => browserWorkspace({ name: 'repo' }))
const session = await Agent.create().session(memoryWorkspace())
const snapshot = { ...session.snapshot(), workspace: { kind: 'browser', name: 'repo' } }
const resumed = await caught(() => Agent.create().resumeSession(snapshot))
await session.close()
// Give a background IndexedDB open (had one been started) time to fail.
await new Promise((resolve) => setTimeout(resolve, 300))
console.log(JSON.stringify({ created, resumed }))
`)
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    const { created, resumed } = JSON.parse(run.stdout) as Record<
      string,
      { typed: boolean; code: string; message: string }
    >
    for (const error of [created!, resumed!]) {
      expect(error).toMatchObject({ typed: true, code: 'unsupported' })
      expect(error.message).toContain('browserWorkspace needs IndexedDB')
      expect(error.message).toContain('use localWorkspace or memoryWorkspace')
    }
  }, 90_000)
})
