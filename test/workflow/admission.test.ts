import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  Agent,
  memoryWorkflowStore,
  memoryWorkspace,
  type ToolResult,
} from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import { scriptedModel } from '../agent/scripted-model.ts'

// Generation permits and the file store's symlink refusal, through real sessions.

const GENERATIONS = `export default async function run(ctx, inputs) {
  const ids = ['g0', 'g1', 'g2']
  const missing = ids.filter((id) => !(id in inputs.step_outputs))
  if (missing.length > 0)
    return { type: 'schedule_steps', steps: missing.map((id) => ({ step_id: id, step_name: 'generate_object',
      input: { schema: { type: 'object', properties: { v: { type: 'integer' } }, required: ['v'] }, prompt: 'give v', mode: 'prompt', timeout_ms: 1500 } })) }
  return { type: 'complete', output: ids.map((id) => inputs.step_outputs[id].metadata.object) }
}`

describe('dynamic_workflow admission', () => {
  it('runs generate_object steps one at a time, each clock started only with its permit', async () => {
    const model = scriptedModel([{ text: '{"v": 7}', delayMs: 600 }])
    const store = memoryWorkflowStore()
    const s = await Agent.create({ model }).session(memoryWorkspace({}), { workflows: { store } })
    // Three 600 ms generations in 1.5 s timeouts: all pass only if none waits on its own clock.
    const r: ToolResult = await s.tool('dynamic_workflow', {
      source: GENERATIONS,
      run_id: 'gen',
      limits: { maxConcurrentSteps: 4, maxConcurrentGenerations: 1 },
    })
    expect(r.exitCode, r.output).toBe(0)
    expect(JSON.parse(r.output)).toEqual([{ v: 7 }, { v: 7 }, { v: 7 }])
    const order = (await store.history('gen'))
      .filter((e) => e.type === 'step_started' || e.type === 'step_completed')
      .map((e) => e.type)
    expect(order).toEqual([
      'step_started',
      'step_completed',
      'step_started',
      'step_completed',
      'step_started',
      'step_completed',
    ])
    await s.close()
  }, 30_000)

  it('refuses a symlinked store path on a local workspace', async () => {
    const base = mkdtempSync(join(tmpdir(), 'isoagent-wf-link-'))
    try {
      const root = join(base, 'root')
      mkdirSync(join(root, '.a3s'), { recursive: true })
      mkdirSync(join(root, 'elsewhere'))
      symlinkSync(join(root, 'elsewhere'), join(root, '.a3s/workflow'))
      const s = await Agent.create().session(localWorkspace(root, { searchThreads: 0 }), {
        workflows: {},
      })
      const r = await s.tool('dynamic_workflow', {
        source: `export default async function run() { return { type: 'complete', output: 1 } }`,
        run_id: 'linked',
      })
      expect(r.exitCode).toBe(1)
      expect(r.errorKind?.type).toBe('permission_denied')
      expect(r.output).toMatch(/symlink/)
      await s.close()
    } finally {
      rmSync(base, { recursive: true, force: true })
    }
  })
})
