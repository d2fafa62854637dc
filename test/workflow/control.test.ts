import { describe, expect, it } from 'vitest'
import {
  Agent,
  memoryWorkflowStore,
  memoryWorkspace,
  type CustomTool,
  type Session,
  type WorkflowStore,
} from '../../adapters/index.ts'

// session.workflow(runId): inspect, history, cancel (settling running steps), drive (resume).

const nap: CustomTool = {
  name: 'nap',
  description: 'Wait 150 ms.',
  parameters: { type: 'object', additionalProperties: false, properties: {} },
  scheduling: { read_only: true, idempotent: true, max_parallelism: 16 },
  run: async (_args, runtime) => {
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(resolve, 150)
      runtime.signal.addEventListener(
        'abort',
        () => (clearTimeout(t), reject(new Error('aborted'))),
      )
    })
    return 'slept'
  },
}

const SLOW = `export default async function run(ctx, inputs) {
  if (inputs.kind === 'step') { await ctx.tool('nap', {}); return inputs.step_id }
  const ids = Array.from({ length: 20 }, (_, i) => 'n' + i)
  const missing = ids.filter((id) => !(id in inputs.step_outputs))
  if (missing.length > 0)
    return { type: 'schedule_steps', steps: missing.map((id) => ({ step_id: id, step_name: 'nap', input: {} })) }
  return { type: 'complete', output: ids.length }
}`

async function session(store: WorkflowStore): Promise<Session> {
  return Agent.create().session(memoryWorkspace({}), { workflows: { store }, tools: [nap] })
}

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return true
    await new Promise((r) => setTimeout(r, 10))
  }
  return check()
}

describe('session.workflow', () => {
  it('cancels a running run: running steps settle, run_cancelled ends the journal', async () => {
    const store = memoryWorkflowStore()
    const s = await session(store)
    const handle = s.workflow('slow')
    expect((await handle.inspect()).status).toBe('unknown')
    const call = s.tool('dynamic_workflow', {
      source: SLOW,
      run_id: 'slow',
      limits: { maxConcurrentSteps: 2 },
    })
    const started = await waitFor(async () => (await handle.inspect()).steps.completed >= 2, 20_000)
    expect(started).toBe(true)
    const live = await handle.inspect()
    expect(live).toMatchObject({ run_id: 'slow', status: 'running', running: true })
    expect(await handle.cancel('enough')).toBe(true)
    const result = await call
    expect(result.exitCode).toBe(1)
    expect(result.errorKind?.type).toBe('cancelled')
    const history = await handle.history()
    expect(history.at(-1)).toMatchObject({ type: 'run_cancelled', reason: 'enough' })
    expect(history.map((e) => e.sequence)).toEqual(history.map((_, i) => i + 1))
    const after = await handle.inspect()
    expect(after).toMatchObject({ status: 'cancelled', running: false })
    expect(after.steps.completed).toBeLessThan(20)
    expect(await handle.cancel()).toBe(false)
    await s.close()
  }, 30_000)

  it('drives a journaled run to completion with its journaled source and input', async () => {
    const store = memoryWorkflowStore()
    const s = await session(store)
    const source = `export default async function run(ctx, inputs) {
      if (inputs.kind === 'step') return inputs.input.x + 1
      if (!('a' in inputs.step_outputs)) return { type: 'schedule_step', step_id: 'a', step_name: 'inc', input: { x: inputs.input.x } }
      return { type: 'complete', output: inputs.step_outputs.a }
    }`
    await store.append('later', 0, [
      {
        type: 'run_created',
        run_id: 'later',
        source_hash: await sha(source),
        input: { x: 41 },
        source,
      },
    ])
    const result = await s.workflow('later').drive()
    expect(result.exitCode, result.output).toBe(0)
    expect(JSON.parse(result.output)).toBe(42)
    expect((await s.workflow('later').inspect()).status).toBe('completed')
    await expect(s.workflow('nope').drive()).rejects.toMatchObject({ code: 'not_found' })
    await s.close()
  })

  it('is unsupported without the workflows option', async () => {
    const s = await Agent.create().session(memoryWorkspace({}))
    expect(() => s.workflow('x')).toThrow(/workflows option/)
    await s.close()
  })
})

async function sha(text: string): Promise<string> {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, '0')).join('')
}
