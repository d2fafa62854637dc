import { describe, expect, it } from 'vitest'
import {
  Agent,
  IsoagentError,
  memoryWorkspace,
  type AgentEvent,
  type CustomTool,
  type ModelMessage,
} from '../../adapters/index.ts'
import { scriptedModel } from './scripted-model.ts'

const lastToolMessage = (messages: ModelMessage[]) =>
  messages.filter((m): m is Extract<ModelMessage, { role: 'tool' }> => m.role === 'tool').at(-1)

const collect = async (events: AsyncIterable<AgentEvent>) => {
  const out: AgentEvent[] = []
  for await (const e of events) out.push(e)
  return out
}

/** A tool that streams a line, then waits until it is cancelled (or `ms` pass). */
const waiter = (ms: number): CustomTool => ({
  name: 'wait_here',
  description: 'waits',
  parameters: { type: 'object', additionalProperties: false, properties: {} },
  run: (_args, runtime) =>
    new Promise((resolve) => {
      runtime.emitOutput('waiting\n')
      const timer = setTimeout(() => resolve('waited'), ms)
      runtime.signal.addEventListener('abort', () => {
        clearTimeout(timer)
        resolve({
          name: 'wait_here',
          output: 'stopped',
          exitCode: 1,
          errorKind: { type: 'cancelled', op: 'wait_here' },
        })
      })
    }),
})

describe('agent loop', () => {
  it('runs a three-step turn that reads, edits and greps a memory workspace', async () => {
    const model = scriptedModel([
      { text: 'Reading.', calls: [{ name: 'read', args: { file_path: 'src/a.ts' } }] },
      {
        calls: [
          {
            name: 'edit',
            args: { file_path: 'src/a.ts', old_string: 'old()', new_string: 'renamed()' },
          },
        ],
      },
      { calls: [{ name: 'search', args: { mode: 'grep', query: 'renamed' } }] },
      { text: 'Renamed old() to renamed() in src/a.ts.' },
    ])
    const workspace = memoryWorkspace({ 'src/a.ts': 'export const x = old()\n', 'b.md': 'doc\n' })
    const session = await Agent.create({ model }).session(workspace)
    const events = await collect(session.stream('rename old() to renamed()'))
    const finish = events.at(-1)
    expect(finish).toMatchObject({ type: 'finish', steps: 4, finishReason: 'stop' })
    expect(finish?.type === 'finish' && finish.text).toBe('Renamed old() to renamed() in src/a.ts.')
    expect(await session.readFile('src/a.ts')).toContain('renamed()')
    // The model saw the session's tool definitions, and each tool's result in the next request.
    expect(model.requests[0]!.tools!.map((t) => t.name)).toEqual(session.toolNames())
    expect(model.requests[0]!.tools).toEqual(session.toolDefinitions().map((d) => ({ ...d })))
    expect(lastToolMessage(model.requests[1]!.messages)?.content).toContain(
      'export const x = old()',
    )
    expect(lastToolMessage(model.requests[3]!.messages)?.content).toContain('src/a.ts')
    const types = events.map((e) => e.type)
    expect(types.slice(0, 4)).toEqual(['step_start', 'text_delta', 'text_delta', 'tool_call'])
    expect(types.filter((t) => t === 'tool_result')).toHaveLength(3)
    expect(types.filter((t) => t === 'step_end')).toHaveLength(4)
    const results = events.filter((e) => e.type === 'tool_result')
    expect(results.map((r) => r.type === 'tool_result' && r.exitCode)).toEqual([0, 0, 0])
    // History: user, then assistant + tool per step, then the final answer.
    expect(session.messages().map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ])
    const sent = await session.send('and again?')
    expect(sent.text).toBe('Renamed old() to renamed() in src/a.ts.')
    expect(sent.steps).toHaveLength(1)
    expect(sent.usage).toEqual({ inputTokens: 10, outputTokens: 5 })
    await session.close()
  })

  it('gives a denied call to the model as a failed result, and the file stays', async () => {
    const model = scriptedModel([
      { calls: [{ name: 'write', args: { file_path: 'secret/x', content: 'leak' } }] },
      (request) => ({ text: `saw: ${lastToolMessage(request.messages)?.content}` }),
    ])
    const workspace = memoryWorkspace({ 'secret/x': 'keep\n' })
    const session = await Agent.create({ model }).session(workspace, {
      permissions: { deny: ['write(secret/**)'] },
    })
    const result = await session.send('write it')
    expect(result.steps[0]!.toolResults[0]).toMatchObject({
      toolName: 'write',
      exitCode: 1,
      errorKind: { type: 'permission_denied' },
    })
    const seen = lastToolMessage(model.requests[1]!.messages)!
    expect(seen.isError).toBe(true)
    expect(seen.content).toMatch(/^Error \(permission_denied\): .*denied by permission rule/)
    expect(result.text).toContain('permission_denied')
    expect(await session.readFile('secret/x')).toContain('keep')
  })

  it('sends invalid JSON arguments and unknown tools back as typed failures', async () => {
    const model = scriptedModel([
      {
        calls: [
          { name: 'read', args: '{"file_path": ' },
          { name: 'nope', args: {} },
        ],
      },
      { text: 'ok' },
    ])
    const session = await Agent.create({ model }).session(memoryWorkspace())
    const result = await session.send('go')
    expect(result.steps[0]!.toolResults.map((r) => r.errorKind?.type)).toEqual([
      'invalid_argument',
      'unsupported',
    ])
  })

  it('cancels mid-stream: the model request is aborted and the turn settles', async () => {
    const model = scriptedModel([{ text: 'thinking hard', delayMs: 10_000 }])
    const session = await Agent.create({ model }).session(memoryWorkspace())
    const controller = new AbortController()
    const started = Date.now()
    const seen: string[] = []
    await expect(
      (async () => {
        for await (const e of session.stream('go', { signal: controller.signal })) {
          seen.push(e.type)
          if (e.type === 'text_delta') controller.abort()
        }
      })(),
    ).rejects.toMatchObject({ code: 'cancelled' })
    expect(Date.now() - started).toBeLessThan(2000)
    expect(seen).toEqual(['step_start', 'text_delta'])
    expect(session.messages()).toEqual([{ role: 'user', content: 'go' }])
    expect(session.activeTools()).toEqual([])
  })

  it('cancels running tools; the history keeps their cancelled results', async () => {
    const model = scriptedModel([{ calls: [{ name: 'wait_here', args: {} }] }, { text: 'never' }])
    const session = await Agent.create({ model }).session(memoryWorkspace(), {
      tools: [waiter(10_000)],
    })
    const controller = new AbortController()
    const events: AgentEvent[] = []
    const run = (async () => {
      for await (const e of session.stream('go', { signal: controller.signal })) {
        events.push(e)
        if (e.type === 'tool_output_delta') controller.abort()
      }
    })()
    await expect(run).rejects.toBeInstanceOf(IsoagentError)
    expect(events.map((e) => e.type)).toContain('tool_result')
    expect(events.find((e) => e.type === 'tool_output_delta')).toMatchObject({
      toolName: 'wait_here',
      delta: 'waiting\n',
    })
    expect(session.activeTools()).toEqual([])
    const history = session.messages()
    expect(history.map((m) => m.role)).toEqual(['user', 'assistant', 'tool'])
    expect(lastToolMessage(history)).toMatchObject({ isError: true })
    expect(model.requests).toHaveLength(1)
  })

  it('closing the session ends a running turn', async () => {
    const model = scriptedModel([{ text: 'slow', delayMs: 10_000 }])
    const session = await Agent.create({ model }).session(memoryWorkspace())
    const turn = session.send('go')
    await new Promise((r) => setTimeout(r, 20))
    await session.close()
    await expect(turn).rejects.toMatchObject({ code: 'cancelled' })
  })

  it('stops at maxSteps and refuses a second turn while one runs', async () => {
    const model = scriptedModel([{ calls: [{ name: 'ls', args: {} }] }])
    const session = await Agent.create({ model }).session(memoryWorkspace({ a: '1' }))
    const result = await session.send('loop forever', { maxSteps: 3 })
    expect(result.finishReason).toBe('max_steps')
    expect(result.steps).toHaveLength(3)
    expect(model.requests).toHaveLength(3)
    const slow = scriptedModel([{ text: 'x', delayMs: 200 }])
    const s2 = await Agent.create({ model: slow }).session(memoryWorkspace())
    const first = s2.send('one')
    await expect(s2.send('two')).rejects.toMatchObject({ code: 'invalid_argument' })
    expect(() => s2.stream('two')).toThrow(/already running/)
    await first
    await expect(s2.send('')).rejects.toMatchObject({ code: 'invalid_argument' })
    await expect(s2.send('x', { maxSteps: 0 })).rejects.toMatchObject({ code: 'invalid_argument' })
  })

  it('propagates a model failure as its typed error, keeping whole steps in history', async () => {
    const model = scriptedModel([
      { calls: [{ name: 'ls', args: {} }] },
      { error: new IsoagentError('rate_limited', 'slow down', { data: { retry_after_ms: 5 } }) },
    ])
    const session = await Agent.create({ model }).session(memoryWorkspace())
    await expect(session.send('go')).rejects.toMatchObject({ code: 'rate_limited' })
    expect(session.messages().map((m) => m.role)).toEqual(['user', 'assistant', 'tool'])
  })

  it('resumes from a snapshot and continues the conversation', async () => {
    const model = scriptedModel([
      { calls: [{ name: 'read', args: { file_path: 'n.txt' } }] },
      { text: 'The number is 42.' },
      (request) => ({ text: `I remember ${request.messages.length} messages` }),
    ])
    const workspace = memoryWorkspace({ 'n.txt': '42\n' })
    const agent = Agent.create({ model, system: 'Be brief.' })
    const session = await agent.session(workspace)
    await session.send('what is the number?')
    const snapshot = JSON.parse(JSON.stringify(session.snapshot()))
    expect(snapshot.conversation.messages).toHaveLength(4)
    await session.close()
    const resumed = await agent.resumeSession(snapshot, { workspace })
    const next = await resumed.send('remind me')
    // system + 4 earlier messages + the new prompt.
    expect(next.text).toBe('I remember 6 messages')
    const request = model.requests[2]!
    expect(request.messages[0]).toEqual({ role: 'system', content: 'Be brief.' })
    expect(request.messages[1]).toEqual({ role: 'user', content: 'what is the number?' })
    expect(request.messages.at(-1)).toEqual({ role: 'user', content: 'remind me' })
    expect(resumed.snapshot().conversation!.messages).toHaveLength(6)
    // Old snapshots (no conversation) still resume; a malformed conversation is refused.
    const { conversation: _c, ...old } = snapshot
    expect((await agent.resumeSession(old, { workspace })).messages()).toEqual([])
    await expect(
      agent.resumeSession(
        { ...snapshot, conversation: { messages: [{ role: 'x' }] } },
        { workspace },
      ),
    ).rejects.toMatchObject({ code: 'invalid_argument' })
  })

  it('without a model: typed unsupported errors, and no task tool', async () => {
    const session = await Agent.create().session(memoryWorkspace())
    await expect(session.send('hi')).rejects.toMatchObject({ code: 'unsupported' })
    expect(() => session.stream('hi')).toThrow(IsoagentError)
    expect(session.toolNames()).not.toContain('task')
    const task = await session.task({ agent: 'explore', description: 'd', prompt: 'p' })
    expect(task).toMatchObject({ exitCode: 1, errorKind: { type: 'unsupported' } })
    expect(() => Agent.create({ model: {} as never })).toThrow(/LanguageModel/)
  })
})

describe('agent loop and redaction', () => {
  it('redacts the session secrets from what the model wrote, in events and the result', async () => {
    const model = scriptedModel([
      {
        text: 'the key is hunter2-secret',
        calls: [{ name: 'ls', args: { path: 'hunter2-secret' } }],
      },
      { text: 'done with hunter2-secret' },
    ])
    const session = await Agent.create({ model }).session(memoryWorkspace(), {
      redactSecrets: ['hunter2-secret'],
    })
    const events = await collect(session.stream('go'))
    expect(JSON.stringify(events)).not.toContain('hunter2-secret')
    expect(events.at(-1)).toMatchObject({ type: 'finish', text: 'done with [REDACTED]' })
    const result = await session.send('again')
    expect(result.text).toBe('done with [REDACTED]')
  })
})

describe('StreamRedactor', () => {
  it('catches a secret split over any two deltas and holds nothing else back', async () => {
    const { StreamRedactor } = await import('../../src/agent/stream-redactor.ts')
    const text = 'before s3cr3t-value middle s3cr3t-value after s3cr'
    for (let cut = 0; cut <= text.length; cut++) {
      const r = new StreamRedactor(
        (t) => t.replaceAll('s3cr3t-value', '[REDACTED]'),
        ['s3cr3t-value'],
      )
      const shown = r.push(text.slice(0, cut)) + r.push(text.slice(cut)) + r.flush()
      expect(shown).toBe('before [REDACTED] middle [REDACTED] after s3cr')
    }
    const plain = new StreamRedactor((t) => t, ['zzz'])
    expect(plain.push('hello ')).toBe('hello ')
  })
})

describe('agent loop events and signed URLs', () => {
  it('shows a tool call the way the tool redacts its arguments (no signed query)', async () => {
    const model = scriptedModel([
      {
        calls: [
          { name: 'web_fetch', args: { url: 'http://127.0.0.2/f?X-Amz-Signature=SECRETSIG' } },
        ],
      },
      { text: 'done' },
    ])
    const session = await Agent.create({ model }).session(memoryWorkspace())
    const events: unknown[] = []
    for await (const e of session.stream('fetch it')) events.push(e)
    const call = events.find((e) => (e as { type: string }).type === 'tool_call')
    expect(call).toMatchObject({ toolName: 'web_fetch' })
    expect(JSON.stringify(events)).not.toContain('SECRETSIG')
    // The model still got what it asked for: the call ran with its own arguments.
    expect(JSON.stringify(model.requests[1]!.messages)).toContain('SECRETSIG')
    await session.close()
  })
})
