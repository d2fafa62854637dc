import { describe, expect, it } from 'vitest'
import {
  Agent,
  memoryWorkflowStore,
  memoryWorkspace,
  recoverWorkflowStepOutput,
  workspaceWorkflowStore,
  WorkspacePath,
  type Session,
  type ToolResult,
  type WorkflowStore,
} from '../../adapters/index.ts'

// dynamic_workflow through a real session: QuickJS scripts, the kernel, a memory workspace.

/** Fans out `inputs.input.n` steps, each doubling its index, then completes with their sum. */
const FAN_OUT = `export default async function run(ctx, inputs) {
  if (inputs.kind === 'step') return inputs.input.i * 2
  const n = inputs.input.n
  const ids = Array.from({ length: n }, (_, i) => 's' + i)
  const missing = ids.filter((id) => !(id in inputs.step_outputs))
  if (missing.length > 0)
    return { type: 'schedule_steps', steps: missing.map((id) => ({ step_id: id, step_name: 'double', input: { i: Number(id.slice(1)) } })) }
  return { type: 'complete', output: { sum: ids.reduce((s, id) => s + inputs.step_outputs[id], 0) } }
}`

async function session(store: WorkflowStore = memoryWorkflowStore()): Promise<Session> {
  return Agent.create().session(memoryWorkspace({ 'a.txt': 'hello\n' }), { workflows: { store } })
}

type WorkflowMeta = {
  run_id: string
  status: string
  last_sequence: number
  source_hash: string
  steps: { step_id: string; status: string; attempts: number }[]
  admission: { maxConcurrentSteps: number; peakActiveSteps: number }
}
const meta = (r: ToolResult) => r.metadata?.dynamic_workflow as WorkflowMeta

describe('dynamic_workflow', () => {
  it('is offered only when the host enables workflows', async () => {
    const plain = await Agent.create().session(memoryWorkspace({}))
    expect(plain.toolNames()).not.toContain('dynamic_workflow')
    const s = await session()
    expect(s.toolNames()).toContain('dynamic_workflow')
    await plain.close()
    await s.close()
  })

  it('reports each step on the session stream', async () => {
    const s = await session()
    const events: { type: string; step_id?: string }[] = []
    const seen = (async () => {
      for await (const e of s.events()) events.push(e as { type: string; step_id?: string })
    })()
    const r = await s.tool('dynamic_workflow', { source: FAN_OUT, input: { n: 2 }, run_id: 'ev' })
    expect(r.exitCode, r.output).toBe(0)
    await s.close()
    await seen
    const steps = events.filter((e) => e.type.startsWith('workflow_step_'))
    expect(steps.map((e) => `${e.type}:${e.step_id}`).sort()).toEqual([
      'workflow_step_completed:s0',
      'workflow_step_completed:s1',
      'workflow_step_started:s0',
      'workflow_step_started:s1',
    ])
  })

  it('fans out steps with bounded admission and journals a contiguous history', async () => {
    const store = memoryWorkflowStore()
    const s = await session(store)
    const r = await s.tool('dynamic_workflow', {
      source: FAN_OUT,
      input: { n: 10 },
      run_id: 'fan',
      limits: { maxConcurrentSteps: 3 },
    })
    expect(r.exitCode, r.output).toBe(0)
    expect(JSON.parse(r.output)).toEqual({ sum: 90 })
    expect(r.output).toBe(JSON.stringify({ sum: 90 }, null, 2))
    const m = meta(r)
    expect(m.status).toBe('completed')
    expect(m.admission.maxConcurrentSteps).toBe(3)
    expect(m.admission.peakActiveSteps).toBeGreaterThan(1)
    expect(m.admission.peakActiveSteps).toBeLessThanOrEqual(3)
    const history = await store.history('fan')
    expect(history.map((e) => e.sequence)).toEqual(history.map((_, i) => i + 1))
    expect(history[0]!.type).toBe('run_created')
    expect(history.at(-1)!.type).toBe('run_completed')
    expect(history.filter((e) => e.type === 'step_completed')).toHaveLength(10)
    expect(m.last_sequence).toBe(history.length)
    // The same id, source and input: idempotent, nothing runs again.
    const again = await s.tool('dynamic_workflow', {
      source: FAN_OUT,
      input: { n: 10 },
      run_id: 'fan',
    })
    expect(again.exitCode).toBe(0)
    expect((await store.history('fan')).length).toBe(history.length)
    await s.close()
  })

  it('refuses another source for an existing run id', async () => {
    const s = await session()
    const first = await s.tool('dynamic_workflow', {
      source: FAN_OUT,
      input: { n: 1 },
      run_id: 'r1',
    })
    expect(first.exitCode).toBe(0)
    const other = await s.tool('dynamic_workflow', {
      source: FAN_OUT + '\n// v2',
      input: { n: 1 },
      run_id: 'r1',
    })
    expect(other.exitCode).toBe(1)
    expect(other.errorKind?.type).toBe('invalid_argument')
    expect(other.output).toMatch(/another source/)
    await s.close()
  })

  it('retries a failing step to completion, and continues past an exhausted one', async () => {
    const source = `export default async function run(ctx, inputs) {
      if (inputs.kind === 'step') {
        if (inputs.step_name === 'flaky' && inputs.attempt < 3) throw new Error('flake ' + inputs.attempt)
        if (inputs.step_name === 'broken') throw new Error('always')
        return 'ok@' + inputs.attempt
      }
      if (!('a' in inputs.step_outputs) && !('b' in inputs.step_failures))
        return { type: 'schedule_steps', steps: [
          { step_id: 'a', step_name: 'flaky', input: {}, retry: { max_attempts: 3, delay_ms: 5 } },
          { step_id: 'b', step_name: 'broken', input: {}, retry: { max_attempts: 2, on_exhausted: 'continue_workflow' } },
        ] }
      return { type: 'complete', output: { a: inputs.step_outputs.a, b: inputs.step_failures.b } }
    }`
    const s = await session()
    const r = await s.tool('dynamic_workflow', { source, run_id: 'retry' })
    expect(r.exitCode, r.output).toBe(0)
    const out = JSON.parse(r.output) as { a: string; b: { error: string; attempts: number } }
    expect(out.a).toBe('ok@3')
    expect(out.b.attempts).toBe(2)
    expect(out.b.error).toMatch(/always/)
    await s.close()
  })

  it('fails the run when a step is exhausted with fail_run', async () => {
    const source = `export default async function run(ctx, inputs) {
      if (inputs.kind === 'step') throw new Error('nope')
      return { type: 'schedule_step', step_id: 'x', step_name: 'bad', input: {}, retry: { max_attempts: 2 } }
    }`
    const s = await session()
    const r = await s.tool('dynamic_workflow', { source, run_id: 'f' })
    expect(r.exitCode).toBe(1)
    expect(meta(r).status).toBe('failed')
    expect(r.output).toMatch(/step x failed after 2 attempts/)
    await s.close()
  })

  it('returns an error result for wait_until (suspended)', async () => {
    const source = `export default async function run() {
      return { type: 'wait_until', wait_id: 'w1', resume_at: '2030-01-01T00:00:00Z' }
    }`
    const s = await session()
    const r = await s.tool('dynamic_workflow', { source, run_id: 'w' })
    expect(r.exitCode).toBe(1)
    expect(meta(r).status).toBe('suspended')
    expect(r.output).toMatch(/suspended until 2030/)
    await s.close()
  })

  it('types an invalid command and a re-scheduled step with another input', async () => {
    const s = await session()
    const bad = await s.tool('dynamic_workflow', {
      source: `export default async function run() { return { type: 'explode' } }`,
    })
    expect(bad.exitCode).toBe(1)
    expect(bad.errorKind?.type).toBe('invalid_argument')
    expect(bad.output).toMatch(/invalid command: unknown command type "explode"/)
    const conflicting = await s.tool('dynamic_workflow', {
      source: `export default async function run(ctx, inputs) {
        if (inputs.kind === 'step') return 1
        const n = Object.keys(inputs.step_outputs).length
        return { type: 'schedule_step', step_id: 'same', step_name: 'x', input: { n } }
      }`,
    })
    expect(conflicting.exitCode).toBe(1)
    expect(conflicting.output).toMatch(/already journaled with another step_name or input/)
    await s.close()
  })

  it('refuses a 200 KiB input', async () => {
    const s = await session()
    const r = await s.tool('dynamic_workflow', {
      source: FAN_OUT,
      input: { blob: 'x'.repeat(200 * 1024) },
    })
    expect(r.exitCode).toBe(1)
    expect(r.errorKind?.type).toBe('invalid_argument')
    expect(r.output).toMatch(/at most 131072/)
    await s.close()
  })

  it('keeps program, dynamic_workflow and parallel_task out of the default allowed tools', async () => {
    const source = `export default async function run(ctx, inputs) {
      if (inputs.kind === 'step') return null
      const out = {}
      for (const name of ['program', 'dynamic_workflow', 'parallel_task', 'read'])
        out[name] = (await ctx.tool(name, name === 'read' ? { file_path: 'a.txt' } : {})).exitCode
      return { type: 'complete', output: out }
    }`
    const s = await session()
    const r = await s.tool('dynamic_workflow', { source, limits: { maxToolCalls: 10 } })
    expect(r.exitCode, r.output).toBe(0)
    expect(JSON.parse(r.output)).toEqual({
      program: 1,
      dynamic_workflow: 1,
      parallel_task: 1,
      read: 0,
    })
    await s.close()
  })

  it('recovers a step output only for the same run id, query and step id', async () => {
    const store = memoryWorkflowStore()
    const s = await session(store)
    const source = `export default async function run(ctx, inputs) {
      if (inputs.kind === 'step') return 'answer to ' + inputs.input.q
      if (!('s1' in inputs.step_outputs))
        return { type: 'schedule_step', step_id: 's1', step_name: 'ask', input: { q: inputs.input.query } }
      return { type: 'complete', output: inputs.step_outputs.s1 }
    }`
    const r = await s.tool('dynamic_workflow', { source, run_id: 'q1', input: { query: 'why' } })
    expect(r.exitCode, r.output).toBe(0)
    expect(
      await recoverWorkflowStepOutput(store, { runId: 'q1', query: 'why', stepId: 's1' }),
    ).toEqual({
      output: 'answer to why',
    })
    expect(
      await recoverWorkflowStepOutput(store, { runId: 'q1', query: 'why ', stepId: 's1' }),
    ).toBeUndefined()
    expect(
      await recoverWorkflowStepOutput(store, { runId: 'q1', query: 'why', stepId: 's2' }),
    ).toBeUndefined()
    expect(
      await recoverWorkflowStepOutput(store, { runId: 'q2', query: 'why', stepId: 's1' }),
    ).toBeUndefined()
    await s.close()
  })

  it('file store: a torn last line is ignored and dropped by the next append', async () => {
    const ws = memoryWorkspace({})
    const store = workspaceWorkflowStore(ws)
    await store.append('t', 0, [{ type: 'run_created', run_id: 't', source_hash: 'h', input: {} }])
    await store.append('t', 1, [{ type: 'step_started', step_id: 'a', attempt: 1 }])
    const path = WorkspacePath.parse('.a3s/workflow/t.jsonl')
    const text = new TextDecoder().decode(await ws.read(path))
    await ws.write(path, new TextEncoder().encode(text + '{"sequence":3,"type":"step_comp'))
    const history = await store.history('t')
    expect(history.map((e) => e.type)).toEqual(['run_created', 'step_started'])
    await store.append('t', 2, [{ type: 'step_completed', step_id: 'a', attempt: 1, output: 7 }])
    const after = await store.history('t')
    expect(after.map((e) => e.sequence)).toEqual([1, 2, 3])
    expect(
      new TextDecoder()
        .decode(await ws.read(path))
        .split('\n')
        .filter(Boolean),
    ).toHaveLength(3)
    // A stale writer is refused.
    await expect(
      store.append('t', 2, [{ type: 'run_failed', error: 'late' }]),
    ).rejects.toMatchObject({ code: 'version_conflict' })
  })
})
