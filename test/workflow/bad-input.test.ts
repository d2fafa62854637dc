import { describe, expect, it } from 'vitest'
import { Agent, memoryWorkflowStore, memoryWorkspace, type Session } from '../../adapters/index.ts'
import { scriptedModel } from '../agent/scripted-model.ts'

// Bad scripts and inputs end in typed results, never a throw out of the tool.

async function session(): Promise<Session> {
  return Agent.create().session(memoryWorkspace({}), {
    workflows: { store: memoryWorkflowStore() },
  })
}

const status = (r: { metadata?: Record<string, unknown> }) =>
  (r.metadata?.dynamic_workflow as { status: string } | undefined)?.status

describe('dynamic_workflow bad input', () => {
  it('refuses 10,000 steps in one command', async () => {
    const s = await session()
    const r = await s.tool('dynamic_workflow', {
      source: `export default async function run() {
        return { type: 'schedule_steps', steps: Array.from({ length: 10000 }, (_, i) => ({ step_id: 's' + i, step_name: 'x', input: {} })) }
      }`,
      limits: { maxOutputBytes: 1_048_576 },
    })
    expect(r.exitCode).toBe(1)
    expect(r.errorKind?.type).toBe('invalid_argument')
    expect(r.output).toMatch(/at most 1000 steps/)
    expect(status(r)).toBe('failed')
    await s.close()
  })

  it('types a script that returns no command, and one that never returns', async () => {
    const s = await session()
    const none = await s.tool('dynamic_workflow', {
      source: `export default async function run() {}`,
    })
    expect(none.exitCode).toBe(1)
    expect(none.errorKind?.type).toBe('invalid_argument')
    expect(none.output).toMatch(/must return a command object/)
    const started = Date.now()
    const spin = await s.tool('dynamic_workflow', {
      source: `export default async function run() { for (;;) {} }`,
      limits: { timeoutMs: 500 },
    })
    expect(spin.exitCode).toBe(1)
    expect(['failed', 'timed_out']).toContain(status(spin))
    expect(['invalid_argument', 'timeout']).toContain(spin.errorKind?.type)
    expect(Date.now() - started).toBeLessThan(20_000)
    await s.close()
  })

  it('refuses limits out of range and unknown arguments', async () => {
    const s = await session()
    for (const args of [
      { source: 'x', limits: { maxConcurrentSteps: 33 } },
      { source: 'x', limits: { maxConcurrentGenerations: 5 } },
      { source: 'x', run_id: 'a/b' },
      { source: 'x', allowed_tools: ['program'] },
      { source: 'x', extra: 1 },
      { input: {} },
    ]) {
      const r = await s.tool('dynamic_workflow', args)
      expect(r.exitCode, JSON.stringify(args)).toBe(1)
      expect(r.errorKind?.type).toBe('invalid_argument')
    }
    await s.close()
  })

  it('runs task steps through the task tool (scripted model)', async () => {
    const model = scriptedModel([{ text: 'the parser is fine' }])
    const s = await Agent.create({ model }).session(memoryWorkspace({ 'a.txt': 'x\n' }), {
      workflows: {},
    })
    const r = await s.tool('dynamic_workflow', {
      source: `export default async function run(ctx, inputs) {
        if (!('t' in inputs.step_outputs))
          return { type: 'schedule_step', step_id: 't', step_name: 'task',
            input: { tasks: [{ agent: 'explore', description: 'review', prompt: 'Review a.txt' }] } }
        return { type: 'complete', output: inputs.step_outputs.t.output }
      }`,
      run_id: 'with-task',
    })
    expect(r.exitCode, r.output).toBe(0)
    expect(JSON.parse(r.output)).toMatch(/the parser is fine/)
    expect(model.requests.length).toBeGreaterThanOrEqual(1)
    await s.close()
  })
})

describe('SessionOptions.workflows', () => {
  it('refuses an unknown key and a store that is not a WorkflowStore', async () => {
    const agent = Agent.create()
    await expect(
      agent.session(memoryWorkspace({}), { workflows: { bogus: 1 } as never }),
    ).rejects.toMatchObject({ code: 'invalid_argument' })
    await expect(
      agent.session(memoryWorkspace({}), { workflows: { store: {} as never } }),
    ).rejects.toMatchObject({ code: 'invalid_argument' })
  })
})
