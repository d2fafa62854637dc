// The R2 workspace bundled (Node built-ins forbidden) into a Worker with a real R2 binding, run in
// workerd through Miniflare: the scenario's record must equal the same scenario on a memory
// workspace in Node, and a conditional write that loses a race is refused by workerd's R2.
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryWorkspace } from '../../adapters/index.ts'
import type { R2BucketLike } from '../../adapters/r2/index.ts'
import { rawBytes, rawKeys } from '../r2/miniflare-r2.ts'
import { bundle, nodeSpecifiers } from './bundle.ts'
import { runWorkspaceScenario, type ScenarioRecord } from './r2-scenario.ts'

const WORKER = `
import { IsoagentError, WorkspacePath } from '../../adapters/index.ts'
import { r2Workspace } from '../../adapters/r2/index.ts'
import { gatedBucket, runWorkspaceScenario } from './r2-scenario.ts'

async function enforcement(bucket) {
  // The workspace checks the version, then another writer lands, then the conditional put is
  // sent: only R2 can refuse it now.
  const workspace = r2Workspace(bucket, { prefix: 'enforced/' })
  const path = WorkspacePath.parse('v.txt')
  await workspace.write(path, new TextEncoder().encode('one'))
  const version = (await workspace.stat(path)).version
  const intruding = {
    ...Object.fromEntries(['head', 'get', 'list', 'delete'].map((m) => [m, (...a) => bucket[m](...a)])),
    async put(key, value, options) {
      if (options && options.onlyIf) await bucket.put(key, new TextEncoder().encode('intruder'))
      return bucket.put(key, value, options)
    },
  }
  const racing = r2Workspace(intruding, { prefix: 'enforced/' })
  const outcome = await racing
    .write(path, new TextEncoder().encode('two'), { precondition: { ifVersion: version } })
    .then(() => 'ok', (e) => (e instanceof IsoagentError ? e.code : String(e)))
  const created = await racing
    .write(WorkspacePath.parse('new.txt'), new TextEncoder().encode('mine'), { precondition: { ifAbsent: true } })
    .then(() => 'ok', (e) => (e instanceof IsoagentError ? e.code : String(e)))
  return { outcome, created, after: await (await bucket.get('enforced/v.txt')).text() }
}

export default {
  async fetch(request, env) {
    try {
      const gate = gatedBucket(env.BUCKET)
      const workspace = r2Workspace(gate.bucket, { prefix: 'scenario/' })
      const second = r2Workspace(gate.bucket, { prefix: 'scenario/' })
      const record = await runWorkspaceScenario({ workspace, second, armRace: gate.arm })
      return Response.json({
        userAgent: navigator.userAgent,
        record,
        held: gate.held(),
        capabilities: workspace.capabilities,
        toolNames: (await (await import('../../adapters/index.ts')).Agent.create().session(workspace)).toolNames(),
        enforcement: await enforcement(env.BUCKET),
      })
    } catch (error) {
      return new Response(String(error && error.stack ? error.stack : error), { status: 500 })
    }
  },
}
`

interface WorkerAnswer {
  userAgent: string
  record: ScenarioRecord
  held: number
  capabilities: Record<string, unknown>
  toolNames: string[]
  enforcement: { outcome: string; created: string; after: string }
}

describe('r2 workspace inside workerd (Miniflare, real R2 binding)', () => {
  let mf: Miniflare | undefined
  let code: string
  let answer: WorkerAnswer
  let inNode: ScenarioRecord
  let bucket: R2BucketLike

  beforeAll(async () => {
    code = await bundle({ contents: WORKER, resolveDir: import.meta.dirname, target: 'workerd' })
    mf = new Miniflare({
      modules: true,
      script: code,
      r2Buckets: ['BUCKET'],
      compatibilityDate: '2026-04-01',
      host: '127.0.0.1',
      port: 0,
      cf: false,
      telemetry: { enabled: false },
    })
    const response = await mf.dispatchFetch('http://127.0.0.1/r2')
    const body = await response.text()
    if (response.status !== 200) throw new Error(`worker answered ${response.status}: ${body}`)
    answer = JSON.parse(body) as WorkerAnswer
    bucket = await mf.getR2Bucket('BUCKET')
    const memory = memoryWorkspace()
    inNode = JSON.parse(
      JSON.stringify(await runWorkspaceScenario({ workspace: memory, second: memory })),
    ) as ScenarioRecord
  }, 120_000)

  afterAll(async () => {
    await mf?.dispose()
  })

  it('bundles with no Node built-in and runs in workerd', () => {
    expect(nodeSpecifiers(code)).toEqual([])
    expect(code).not.toMatch(/@aws-sdk/)
    expect(answer.userAgent).toBe('Cloudflare-Workers')
  })

  it('gives exactly the record the memory workspace gives in Node', () => {
    expect(answer.record.steps.map((s) => s.step)).toEqual(inNode.steps.map((s) => s.step))
    for (const [i, step] of answer.record.steps.entries()) expect(step).toEqual(inNode.steps[i])
    expect(answer.record).toEqual(inNode)
  })

  it('reads windows, edits, lists and searches as expected', () => {
    const step = (name: string) => answer.record.steps.find((s) => s.step === name)!
    expect(step('read window').output.split('\n')[0]).toBe('    11\tline 10 buzz')
    expect(step('read window').metadata?.range).toMatchObject({ offset: 10, next_offset: 15 })
    expect(step('edit').exitCode).toBe(0)
    expect(step('edit absent').errorKind).toBe('invalid_argument')
    expect(step('grep').output).toBe('src/b.ts:1:// TODO: handle errors') // build/ is ignored
    expect(step('glob').output.split('\n')).toEqual(['src/a.ts', 'src/b.ts'])
    expect(step('bad: escape').errorKind).toBe('permission_denied')
    expect(step('bad: read a directory').exitCode).toBe(1)
  })

  it('two concurrent edits from one version: R2 lets one land, the other is a version_conflict', () => {
    expect(answer.held).toBe(2) // both edits passed their own check and reached the put
    expect(answer.record.race).toEqual(['ok', 'version_conflict'])
    expect(['     1\tALPHA\n     2\tbeta', '     1\talpha\n     2\tBETA']).toContain(
      answer.record.raced,
    )
  })

  it('enforces conditions in R2 itself, after the workspace checked them', () => {
    expect(answer.enforcement).toEqual({
      outcome: 'version_conflict',
      created: 'version_conflict',
      after: 'intruder',
    })
  })

  it('serves read, write and search but no bash, git or download, and conditionalWrite', () => {
    expect(answer.capabilities).toMatchObject({
      read: true,
      write: true,
      search: true,
      exec: false,
      git: false,
      conditionalWrite: true,
      symlinks: false,
    })
    for (const absent of ['bash', 'git', 'download']) expect(answer.toolNames).not.toContain(absent)
    expect(answer.toolNames).toEqual(
      expect.arrayContaining(['read', 'write', 'edit', 'patch', 'ls', 'search']),
    )
  })

  it('left the files in the bucket under the prefix only', async () => {
    const keys = await rawKeys(bucket, '')
    expect(keys.every((k) => k.startsWith('scenario/') || k.startsWith('enforced/'))).toBe(true)
    expect(keys).toEqual(expect.arrayContaining(['scenario/src/a.ts', 'scenario/doc.txt']))
    const a = new TextDecoder().decode((await rawBytes(bucket, 'scenario/src/a.ts'))!)
    expect(a).toBe('export const a = 42\nexport function handleRequest() {}\n')
  })
})
