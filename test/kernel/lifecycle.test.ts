import { afterEach, describe, expect, it } from 'vitest'
import {
  Agent,
  memoryWorkspace,
  type CustomTool,
  type SessionEvent,
  type ToolRuntime,
} from '../../adapters/index.ts'
import {
  cleanupHarnesses,
  harness,
  recordEvents,
  settle,
  until,
  WORKSPACE_KINDS,
} from './helpers.ts'

afterEach(cleanupHarnesses)

const empty = { type: 'object', additionalProperties: false, properties: {} }

/** A tool that waits until released or aborted (honouring its signal unless told not to). */
function gate(name: string, options: { honourSignal?: boolean; max?: number } = {}) {
  let release!: () => void
  let released = new Promise<void>((r) => (release = r))
  let runs = 0
  const tool: CustomTool = {
    name,
    description: `waits for the test to release it (${name})`,
    parameters: empty,
    scheduling: { read_only: true, idempotent: true, max_parallelism: options.max ?? 16 },
    async run(_args, runtime: ToolRuntime) {
      runs++
      await new Promise<void>((resolve, reject) => {
        void released.then(resolve)
        if (options.honourSignal !== false) {
          runtime.signal.addEventListener('abort', () => reject(runtime.signal.reason), {
            once: true,
          })
        }
      })
      return `${name} done`
    },
  }
  return {
    tool,
    release: () => {
      release()
      released = new Promise<void>((r) => (release = r))
    },
    get runs() {
      return runs
    },
  }
}

describe.each(WORKSPACE_KINDS)('lifecycle on %s workspace', (kind) => {
  it('walks created → admitted → gate_pending → running → completed, visible in events', async () => {
    const h = await harness(kind, { 'a.txt': 'a\n' })
    const rec = recordEvents(h.session)
    await h.session.tool('read', { file_path: 'a.txt' })
    await h.session.tool('read', { file_path: 42 })
    await settle()
    const states = (callId: string) =>
      rec.events
        .filter(
          (e): e is Extract<SessionEvent, { type: 'tool_state' }> =>
            e.type === 'tool_state' && e.callId === callId,
        )
        .map((e) => e.state)
    const ends = rec.events.filter(
      (e): e is Extract<SessionEvent, { type: 'tool_end' }> => e.type === 'tool_end',
    )
    expect(ends).toHaveLength(2)
    expect(states(ends[0]!.callId)).toEqual([
      'created',
      'admitted',
      'gate_pending',
      'running',
      'completed',
    ])
    expect(states(ends[1]!.callId)).toEqual(['created', 'rejected'])
    expect(ends[0]).toMatchObject({
      toolName: 'read',
      origin: 'host_direct',
      exitCode: 0,
      state: 'completed',
    })
    expect(ends[1]).toMatchObject({ exitCode: 1, errorKind: { type: 'invalid_argument' } })
    expect(rec.events.find((e) => e.type === 'tool_start')).toMatchObject({
      args: { file_path: 'a.txt' },
    })
    rec.stop()
  })

  it('shows running calls in activeTools and cancels them with a signal or close()', async () => {
    const g = gate('wait')
    const h = await harness(kind, {}, { tools: [g.tool] })
    const controller = new AbortController()
    const call = h.session.tool('wait', {}, { signal: controller.signal })
    await until(() =>
      h.session.activeTools().some((a) => a.name === 'wait' && a.state === 'running'),
    )
    controller.abort()
    expect((await call).errorKind).toEqual({ type: 'cancelled', op: 'wait' })

    const running = h.session.tool('wait', {})
    await until(() => h.session.activeTools().length === 1)
    await h.session.close()
    const closed = await running
    expect(closed.errorKind?.type).toBe('cancelled')
    expect((await h.session.tool('wait', {})).output).toContain('session is closed')
  })

  it('cancels calls waiting in the queue and calls whose signal is already aborted', async () => {
    const g = gate('single', { max: 1 })
    const h = await harness(kind, {}, { tools: [g.tool] })
    const first = h.session.tool('single', {})
    await until(() => g.runs === 1)
    const controller = new AbortController()
    const queued = h.session.tool('single', {}, { signal: controller.signal })
    await settle()
    expect(
      h.session
        .activeTools()
        .map((a) => a.state)
        .sort(),
    ).toEqual(['gate_pending', 'running'])
    controller.abort()
    expect((await queued).output).toContain('cancelled while queued')
    expect(g.runs).toBe(1)
    g.release()
    expect((await first).output).toBe('single done')
    const pre = new AbortController()
    pre.abort()
    expect((await h.session.tool('single', {}, { signal: pre.signal })).output).toContain(
      'before it started',
    )
    expect(g.runs).toBe(1)
  })

  it('times out at the tool deadline, and says when a tool would not stop', async () => {
    const honest = gate('slow')
    const stubborn = gate('stubborn', { honourSignal: false })
    const h = await harness(
      kind,
      {},
      { tools: [honest.tool, stubborn.tool], toolTimeoutMs: { slow: 30, stubborn: 30 } },
    )
    const r = await h.session.tool('slow', {})
    expect(r.errorKind).toEqual({ type: 'timeout', op: 'slow', duration_ms: 30 })
    expect(r.metadata?.still_running).toBe(false)
    const s = await h.session.tool('stubborn', {})
    expect(s.errorKind?.type).toBe('timeout')
    expect(s.metadata?.still_running).toBe(true)
    expect(h.session.activeTools().map((a) => a.name)).toEqual(['stubborn'])
    stubborn.release()
    await until(() => h.session.activeTools().length === 0)
  }, 10_000)

  it('never blocks on a slow event consumer: bounded buffer, drops counted', async () => {
    const h = await harness(kind, { 'a.txt': 'a\n' }, { eventBufferSize: 10 })
    const iterator = h.session.events()
    for (let i = 0; i < 20; i++)
      expect((await h.session.tool('read', { file_path: 'a.txt' })).exitCode).toBe(0)
    const first = await iterator.next()
    expect(first.value).toMatchObject({ type: 'events_dropped' })
    const dropped = (first.value as { count: number }).count
    const rest: SessionEvent[] = []
    for (let i = 0; i < 10; i++) rest.push((await iterator.next()).value as SessionEvent)
    expect(dropped + 10).toBe(20 * 7)
    expect(rest.at(-1)).toMatchObject({ type: 'tool_end' })
    await iterator.return!()
  })
})

describe('origins and nesting', () => {
  it('governs batch children of a model call but keeps host trust for a host batch', async () => {
    const h = await harness('memory', { 'a.txt': 'a\n' }, { permissions: { deny: ['write'] } })
    const rec = recordEvents(h.session)
    const invocations = [
      { id: 'r', tool: 'read', args: { file_path: 'a.txt' } },
      { id: 'w', tool: 'write', args: { file_path: 'b.txt', content: 'b' } },
    ]
    const governed = await h.session.governedTool('batch', { invocations })
    expect(governed.metadata).toMatchObject({ failed_indices: [1] })
    expect(await h.file('b.txt')).toBeUndefined()
    const host = await h.session.tool('batch', { invocations })
    expect(host.exitCode).toBe(0)
    expect(await h.file('b.txt')).toBe('b')
    await settle()
    const origins = rec.events
      .filter((e) => e.type === 'tool_end' && e.toolName !== 'batch')
      .map((e) => (e as { origin: string }).origin)
    expect(origins).toEqual(['nested', 'nested', 'host_direct_nested', 'host_direct_nested'])
    rec.stop()
  })

  it('rejects batch inside batch, and fans out only read-only batches', async () => {
    const h = await harness('memory', { 'a.txt': 'a\n', 'b.txt': 'b\n' })
    const nested = await h.session.tool('batch', {
      invocations: [
        { tool: 'read', args: { file_path: 'a.txt' } },
        { tool: 'batch', args: { invocations: [{ tool: 'read', args: { file_path: 'a.txt' } }] } },
      ],
    })
    expect(nested.metadata).toMatchObject({ failed_indices: [1] })
    expect(nested.output).toContain('batch cannot be nested inside batch')
    const reads = await h.session.tool('batch', {
      invocations: [
        { tool: 'read', args: { file_path: 'a.txt' } },
        { tool: 'read', args: { file_path: 'b.txt' } },
      ],
      max_concurrency: 2,
    })
    expect(reads.metadata).toMatchObject({ parallel: true, max_concurrency: 2, status: 'complete' })
    expect(reads.output).toBe(
      '=== [0] #0 · read (exit 0) ===\n     1\ta\n=== [1] #1 · read (exit 0) ===\n     1\tb',
    )
    for (const bad of [
      { invocations: [] },
      { invocations: Array.from({ length: 33 }, () => ({ tool: 'ls', args: {} })) },
      {
        invocations: [
          { id: 'x', tool: 'ls', args: {} },
          { id: 'x', tool: 'ls', args: {} },
        ],
      },
    ]) {
      expect((await h.session.tool('batch', bad)).errorKind?.type).toBe('invalid_argument')
    }
  })

  it('never gives a custom tool the host origin', async () => {
    const origins: string[] = []
    const h = await harness(
      'memory',
      { 'a.txt': 'a\n' },
      {
        permissions: { deny: ['write'] },
        hooks: { preToolUse: (call) => void origins.push(`${call.toolName}:${call.origin}`) },
        tools: [
          {
            name: 'writer',
            description: 'writes through the runtime',
            parameters: empty,
            run: async (_args, runtime) =>
              runtime.invoke('write', { file_path: 'a.txt', content: 'pwned' }),
          },
        ],
      },
    )
    const rec = recordEvents(h.session)
    const r = await h.session.tool('writer', {})
    expect(r.errorKind?.type).toBe('permission_denied')
    expect(await h.file('a.txt')).toBe('a\n')
    // The nested write was stopped by the permission rule, before any hook ran.
    expect(origins).toEqual(['writer:host_direct'])
    await settle()
    expect(rec.events.find((e) => e.type === 'permission_denied')).toMatchObject({
      toolName: 'write',
      origin: 'nested',
    })
    rec.stop()
  })

  it('validates custom tool definitions and their arguments', async () => {
    const bad = [
      { name: 'read', description: 'x', parameters: empty, run: () => '' },
      { name: 'bad name', description: 'x', parameters: empty, run: () => '' },
      {
        name: 'open',
        description: 'x',
        parameters: { type: 'object', properties: {} },
        run: () => '',
      },
      {
        name: 'union',
        description: 'x',
        parameters: { type: 'object', additionalProperties: false, oneOf: [] },
        run: () => '',
      },
      { name: 'norun', description: 'x', parameters: empty },
    ]
    for (const tool of bad) {
      await expect(
        Agent.create().session(memoryWorkspace(), { tools: [tool as CustomTool] }),
        tool.name,
      ).rejects.toMatchObject({ code: 'invalid_argument' })
    }
    const h = await harness(
      'memory',
      {},
      {
        tools: [
          {
            name: 'greet',
            description: 'greets',
            parameters: {
              type: 'object',
              additionalProperties: false,
              required: ['who'],
              properties: { who: { type: 'string', maxLength: 5 } },
            },
            run: (args) => `hi ${String(args.who)}`,
          },
          {
            name: 'boom',
            description: 'throws',
            parameters: empty,
            run: () => {
              throw new Error('kaboom')
            },
          },
        ],
      },
    )
    expect((await h.session.tool('greet', { who: 'ann' })).output).toBe('hi ann')
    expect((await h.session.tool('greet', { who: 'annabelle' })).errorKind?.type).toBe(
      'invalid_argument',
    )
    expect((await h.session.tool('greet', { who: 'a', extra: 1 })).errorKind?.type).toBe(
      'invalid_argument',
    )
    const boom = await h.session.tool('boom', {})
    expect(boom.exitCode).toBe(1)
    expect(boom.output).toContain('kaboom')
  })
})
