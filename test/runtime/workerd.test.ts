// The core + memory workspace, bundled with Node built-ins forbidden, run unchanged in workerd
// (through Miniflare): the scenario's record must equal the Node run's, byte for byte.
import { runInWorkerd, type WorkerdRun } from './workerd-runner.ts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, nodeSpecifiers } from './bundle.ts'
import { runSmokeScenario, type SmokeRecord } from './smoke-scenario.ts'
import { expectKeyFacts, stepNamed } from './smoke-facts.ts'

const WORKER = `
import { runSmokeScenario } from './smoke-scenario.ts'

export default {
  async fetch() {
    try {
      const record = await runSmokeScenario()
      return Response.json({ userAgent: navigator.userAgent, record })
    } catch (error) {
      return new Response(String(error && error.stack ? error.stack : error), { status: 500 })
    }
  },
}
`

describe('isomorphic build', () => {
  it('bundles adapters/index.ts with no Node built-in and no node: specifier', async () => {
    const code = await bundle({ entry: 'adapters/index.ts', target: 'workerd' })
    expect(code).toMatch(/\bmemoryWorkspace\b/)
    expect(nodeSpecifiers(code)).toEqual([])
  })

  it('fails the build when anything imports a Node built-in', async () => {
    for (const spec of ['node:fs', 'crypto', 'node:path/posix']) {
      await expect(
        bundle({
          contents: `import * as m from '${spec}'\nexport default m`,
          resolveDir: import.meta.dirname,
          target: 'workerd',
        }),
      ).rejects.toThrow(/Node built-in/)
    }
    expect(nodeSpecifiers(`import { a } from "node:fs"; await import('node:os')`)).toEqual([
      'node:fs',
      'node:os',
    ])
  })
})

describe('workerd (Miniflare)', () => {
  let run: WorkerdRun<SmokeRecord> | undefined
  let userAgent: string
  let inWorkerd: SmokeRecord
  let inNode: SmokeRecord

  beforeAll(async () => {
    run = await runInWorkerd<SmokeRecord>(WORKER, '/smoke')
    userAgent = run.userAgent
    inWorkerd = run.record
    inNode = JSON.parse(JSON.stringify(await runSmokeScenario())) as SmokeRecord
  })

  afterAll(async () => {
    await run?.dispose()
  })

  it('ran inside workerd', () => {
    expect(userAgent).toBe('Cloudflare-Workers')
  })

  it('produces exactly the record Node produces', () => {
    expect(inWorkerd.steps.map((s) => s.step)).toEqual(inNode.steps.map((s) => s.step))
    for (const [i, step] of inWorkerd.steps.entries()) expect(step).toEqual(inNode.steps[i])
    expect(inWorkerd).toEqual(inNode)
  })

  it('keeps the key facts in workerd', () => {
    expectKeyFacts(inWorkerd)
    // sha256 comes from crypto.subtle in the worker (equality with Node's is checked above).
    const after = stepNamed(inWorkerd, 'edit (CRLF)').metadata?.after as { sha256: string }
    expect(after.sha256).toMatch(/^[0-9a-f]{64}$/)
  })
})
