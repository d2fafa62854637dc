import { describe, expect, it } from 'vitest'
import {
  Agent,
  IsoagentError,
  memoryWorkspace,
  type ModelRequest,
  type TaskItemOutcome,
  type TaskRequest,
} from '../../adapters/index.ts'
import { scriptedModel, type ScriptedTurn } from './scripted-model.ts'

/** The task description of a sub-agent's request (its system prompt ends with it). */
const taskOf = (request: ModelRequest) => {
  const system = request.messages[0]
  return system?.role === 'system' ? /Task: (.*)$/.exec(system.content)?.[1] : undefined
}
const toolResults = (request: ModelRequest) => request.messages.filter((m) => m.role === 'tool')
const outcomes = (metadata: Record<string, unknown> | undefined) =>
  metadata!.results as TaskItemOutcome[]

/** Each sub-agent reads its file, then reports it; `fail` descriptions fail at the model. */
function fanOutModel(delayMs = 0) {
  let inFlight = 0
  let peak = 0
  const model = scriptedModel([
    (request): ScriptedTurn => {
      const task = taskOf(request)
      if (task === undefined) return { text: 'parent' }
      if (task.startsWith('fail')) return { error: new IsoagentError('transport', 'model down') }
      if (toolResults(request).length === 0)
        return { calls: [{ name: 'read', args: { file_path: `${task}.txt` } }] }
      return { text: `report of ${task}: ${toolResults(request)[0]!.content.trim()}` }
    },
  ])
  const stream = model.stream.bind(model)
  model.stream = (request, options) =>
    (async function* () {
      inFlight++
      peak = Math.max(peak, inFlight)
      try {
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs))
        yield* stream(request, options)
      } finally {
        inFlight--
      }
    })()
  return { model, peak: () => peak }
}

const files = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`t${i}.txt`, `value ${i}\n`]))
const explore = (description: string): TaskRequest => ({
  agent: 'explore',
  description,
  prompt: `look at ${description}`,
})

describe('task', () => {
  it('fans out 8 explore tasks concurrently, each with read-only tools', async () => {
    const { model, peak } = fanOutModel(40)
    const session = await Agent.create({ model }).session(memoryWorkspace(files))
    expect(session.toolNames()).toContain('task')
    const result = await session.tasks(Array.from({ length: 8 }, (_, i) => explore(`t${i}`)))
    expect(result.exitCode).toBe(0)
    expect(result.metadata).toMatchObject({
      status: 'complete',
      total: 8,
      succeeded: 8,
      concurrent: true,
    })
    expect(peak()).toBe(8)
    const results = outcomes(result.metadata)
    expect(results.map((r) => r.text)).toEqual(
      Array.from({ length: 8 }, (_, i) => `report of t${i}: 1\tvalue ${i}`),
    )
    expect(results.every((r) => r.steps === 2 && r.status === 'completed')).toBe(true)
    expect(result.output).toContain('=== [7] t7 · explore (completed, 2 steps) ===')
    const child = model.requests.find((r) => taskOf(r) === 't0')!
    expect(child.tools!.map((t) => t.name)).toEqual([
      'read',
      'ls',
      'search',
      'web_fetch',
      'web_search',
    ])
    expect(session.activeTools()).toEqual([])
  })

  it('gives verification sub-agents the read-only tools and git, general ones all but task', async () => {
    const { model } = fanOutModel()
    const session = await Agent.create({ model }).session(memoryWorkspace(files))
    await session.tasks([{ ...explore('t0'), agent: 'verification' }])
    const child = model.requests.find((r) => taskOf(r) === 't0')!
    expect(child.tools!.map((t) => t.name)).toEqual([
      'read',
      'ls',
      'search',
      'git',
      'web_fetch',
      'web_search',
    ])
  })

  it('runs general tasks one after another', async () => {
    const { model, peak } = fanOutModel(10)
    const session = await Agent.create({ model }).session(memoryWorkspace(files))
    const result = await session.tasks([{ ...explore('t0'), agent: 'general' }, explore('t1')])
    expect(result.metadata).toMatchObject({ concurrent: false, max_concurrency: 1 })
    expect(peak()).toBe(1)
    const child = model.requests.find((r) => taskOf(r) === 't0')!
    expect(child.tools!.map((t) => t.name)).not.toContain('task')
    expect(child.tools!.map((t) => t.name)).toContain('write')
  })

  it('applies the partial-failure rules', async () => {
    const { model } = fanOutModel()
    const session = await Agent.create({ model }).session(memoryWorkspace(files))
    const items = [explore('t0'), explore('fail1'), explore('t2')]
    const strict = await session.tasks(items)
    expect(strict).toMatchObject({ exitCode: 1, errorKind: { type: 'partial_failure', total: 3 } })
    expect(outcomes(strict.metadata)[1]).toMatchObject({
      status: 'failed',
      errorKind: { type: 'transport' },
    })
    const loose = await session.tasks(items, { allow_partial_failure: true, min_success_count: 2 })
    expect(loose.exitCode).toBe(0)
    expect(loose.metadata).toMatchObject({
      status: 'partial_failure',
      succeeded: 2,
      failed: 1,
      failed_indices: [1],
    })
    const tooFew = await session.tasks(items, { allow_partial_failure: true, min_success_count: 3 })
    expect(tooFew).toMatchObject({
      exitCode: 1,
      errorKind: { type: 'partial_failure', failed: 1, total: 3 },
    })
    const defaultOne = await session.tasks([explore('fail0'), explore('t1')], {
      allow_partial_failure: true,
    })
    expect(defaultOne.exitCode).toBe(0)
    const single = await session.task(explore('fail0'))
    expect(single.errorKind).toMatchObject({ type: 'transport' })
  })

  it('validates min_success_count, background and the items', async () => {
    const { model } = fanOutModel()
    const session = await Agent.create({ model }).session(memoryWorkspace(files))
    const two = [explore('t0'), explore('t1')]
    const cases: [TaskRequest[], Record<string, unknown>, RegExp][] = [
      [two, { min_success_count: 1 }, /only allowed with allow_partial_failure/],
      [two, { allow_partial_failure: true, min_success_count: 3 }, /1\.\.2/],
      [two, { allow_partial_failure: true, min_success_count: 0 }, /min_success_count/],
      [[{ ...explore('t0'), background: true }, explore('t1')], {}, /background is only allowed/],
      [[], {}, /tasks/],
      [Array.from({ length: 33 }, (_, i) => explore(`t${i}`)), {}, /tasks/],
      [[{ ...explore('t0'), agent: 'boss' as never }], {}, /agent/],
      [[{ ...explore('t0'), max_steps: 0 }], {}, /max_steps/],
      [
        [{ ...explore('t0'), output_schema: { type: 'object', description: 'x'.repeat(70_000) } }],
        {},
        /output_schema: .*65536/,
      ],
    ]
    for (const [tasks, extra, message] of cases) {
      const result = await session.tool('task', { tasks, ...extra })
      expect(result.errorKind?.type, JSON.stringify(extra)).toBe('invalid_argument')
      expect(result.output).toMatch(message)
    }
    expect(model.requests).toHaveLength(0)
  })

  it('is called by the model with agent origin; parallel_task is hidden but callable', async () => {
    const model = scriptedModel([
      (request): ScriptedTurn => {
        const task = taskOf(request)
        if (task === 'inner') {
          if (toolResults(request).length === 0)
            return { calls: [{ name: 'task', args: { tasks: [explore('deeper')] } }] }
          return { text: `inner saw ${toolResults(request)[0]!.content}` }
        }
        if (toolResults(request).length === 0)
          return {
            calls: [
              {
                name: 'parallel_task',
                args: { tasks: [{ agent: 'general', description: 'inner', prompt: 'go' }] },
              },
            ],
          }
        return { text: 'parent done' }
      },
    ])
    const session = await Agent.create({ model }).session(memoryWorkspace())
    expect(session.toolNames()).not.toContain('parallel_task')
    expect(session.toolDefinitions().map((d) => d.name)).not.toContain('parallel_task')
    const events = session.events()
    const turn = await session.send('delegate')
    expect(turn.text).toBe('parent done')
    const result = turn.steps[0]!.toolResults[0]!
    expect(result).toMatchObject({ toolName: 'parallel_task', exitCode: 0 })
    // The sub-agent could not start a task of its own.
    expect(result.output).toMatch(/inner saw Error \(unsupported\): tool "task" is not available/)
    await session.close()
    const seen = []
    for await (const e of events) seen.push(e)
    const starts = seen.filter((e) => e.type === 'tool_start')
    expect(starts[0]).toMatchObject({ toolName: 'parallel_task', origin: 'agent' })
  })

  it('refuses task below task in the kernel too', async () => {
    const model = scriptedModel([
      (request): ScriptedTurn =>
        toolResults(request).length === 0
          ? { calls: [{ name: 'sneak', args: {} }] }
          : { text: toolResults(request)[0]!.content },
    ])
    const session = await Agent.create({ model }).session(memoryWorkspace(), {
      tools: [
        {
          name: 'sneak',
          description: 'calls task',
          parameters: { type: 'object', additionalProperties: false, properties: {} },
          run: async (_a, rt) => (await rt.invoke('task', { tasks: [explore('x')] })).output,
        },
      ],
    })
    const result = await session.task({ agent: 'general', description: 'd', prompt: 'p' })
    expect(outcomes(result.metadata)[0]!.text).toMatch(/cannot be called from inside a task/)
  })

  it('returns a validated object for output_schema via generate_object, repairing', async () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      required: ['count'],
      properties: { count: { type: 'integer' } },
    }
    let structured = 0
    const model = scriptedModel([
      (request): ScriptedTurn => {
        const choice = request.toolChoice
        if (typeof choice === 'object') {
          // generate_object in tool mode: a forced call of its schema's tool.
          structured++
          return { calls: [{ name: choice.name, args: { count: structured === 1 ? '3' : 3 } }] }
        }
        return { text: 'I counted 3 files.' }
      },
    ])
    const session = await Agent.create({ model }).session(memoryWorkspace())
    const events = session.events()
    const result = await session.task({ ...explore('count'), output_schema: schema })
    expect(result.exitCode).toBe(0)
    expect(outcomes(result.metadata)[0]!.object).toEqual({ count: 3 })
    expect(structured).toBe(2)
    const objectRequest = model.requests.find((r) => typeof r.toolChoice === 'object')!
    expect(JSON.stringify(objectRequest.messages)).toContain('I counted 3 files.')
    await session.close()
    const starts = []
    for await (const e of events) if (e.type === 'tool_start') starts.push(e)
    expect(starts.map((e) => [e.toolName, e.origin])).toEqual([
      ['task', 'host_direct'],
      ['generate_object', 'nested'],
    ])
    const never = scriptedModel([{ text: 'no json, ever' }])
    const s2 = await Agent.create({ model: never }).session(memoryWorkspace())
    const bad = await s2.task({ ...explore('count'), output_schema: schema })
    expect(bad.exitCode).toBe(1)
    expect(bad.errorKind).toBeDefined()
    expect(outcomes(bad.metadata)[0]!.object).toBeUndefined()
  })

  it('runs a background task the host collects, and cancels it on close', async () => {
    const { model } = fanOutModel(30)
    const session = await Agent.create({ model }).session(memoryWorkspace(files))
    const started = await session.task({ ...explore('t3'), background: true })
    expect(started.exitCode).toBe(0)
    const id = started.metadata!.task_id as string
    expect(session.backgroundTasks()).toMatchObject([{ id, status: 'running', agent: 'explore' }])
    const result = await session.waitForTask(id)
    expect(outcomes(result.metadata)[0]!.text).toBe('report of t3: 1\tvalue 3')
    expect(session.backgroundTasks()[0]).toMatchObject({ id, status: 'completed' })
    await expect(session.waitForTask('task_nope')).rejects.toMatchObject({ code: 'not_found' })

    const slow = scriptedModel([{ text: 'slow', delayMs: 10_000 }])
    const s2 = await Agent.create({ model: slow }).session(memoryWorkspace())
    const bg = await s2.task({ ...explore('x'), background: true })
    const waiting = s2.waitForTask(bg.metadata!.task_id as string)
    const t0 = Date.now()
    await s2.close()
    expect(Date.now() - t0).toBeLessThan(2000)
    expect(await waiting).toMatchObject({ exitCode: 1, errorKind: { type: 'cancelled' } })
    expect(s2.backgroundTasks()[0]!.status).toBe('cancelled')
  })

  it('settles cancelled children before the task call ends', async () => {
    const slow = scriptedModel([{ text: 'slow', delayMs: 10_000 }])
    const session = await Agent.create({ model: slow }).session(memoryWorkspace())
    const controller = new AbortController()
    const run = session.tasks([explore('a'), explore('b'), explore('c')], {
      signal: controller.signal,
    })
    await new Promise((r) => setTimeout(r, 30))
    controller.abort()
    const result = await run
    expect(result).toMatchObject({ exitCode: 1, errorKind: { type: 'cancelled' } })
    expect(outcomes(result.metadata).map((o) => o.status)).toEqual([
      'cancelled',
      'cancelled',
      'cancelled',
    ])
    expect(session.activeTools()).toEqual([])
  })
})
