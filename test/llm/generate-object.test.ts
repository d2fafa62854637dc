// generate_object in Node against both wire protocols of the loopback fake.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  Agent,
  IsoagentError,
  memoryWorkspace,
  openAICompatible,
  type SessionEvent,
} from '../../adapters/index.ts'
import { validateToolArgs } from '../../src/kernel/validate.ts'
import { checkObjectCase } from './check-object-case.ts'
import { startFakeProvider, type FakeProvider } from './fake-provider.ts'
import { ADA, OBJECT_CASES, PERSON_SCHEMA, runObjectCase } from './generate-object-cases.ts'

let fake: FakeProvider
beforeAll(async () => {
  fake = await startFakeProvider()
  for (const c of OBJECT_CASES) fake.program(c.id, c.script)
})
afterAll(() => fake.close())

describe('generate_object cases (Node)', () => {
  it.each(OBJECT_CASES.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    const record = await runObjectCase(c, fake.baseURL)
    checkObjectCase(c, record, fake.requests)
  })
})

describe('generate_object registration and edges', () => {
  const model = () => openAICompatible({ baseURL: fake.baseURL, model: 'edge', retryDelayMs: 1 })

  it('is offered only when the Agent has a model, after the workspace tools', async () => {
    const without = await Agent.create().session(memoryWorkspace())
    expect(without.toolNames()).not.toContain('generate_object')
    const withModel = await Agent.create({ model: model() }).session(memoryWorkspace())
    // The model's tools come after the workspace's: generate_object, then task.
    expect(withModel.toolNames().slice(-2)).toEqual(['generate_object', 'task'])
    const def = withModel.toolDefinitions().find((d) => d.name === 'generate_object')!
    expect(def.parameters.additionalProperties).toBe(false)
    await expect(
      Agent.create({ model: model() }).session(memoryWorkspace(), {
        tools: [
          {
            name: 'generate_object',
            description: 'x',
            parameters: { type: 'object', additionalProperties: false },
            run: () => 'x',
          },
        ],
      }),
    ).rejects.toThrow(IsoagentError)
  })

  it('has a precompiled argument validator matching the contract', () => {
    expect(validateToolArgs('generate_object', { schema: {}, prompt: 'p' })).toBeUndefined()
    expect(validateToolArgs('generate_object', { prompt: 'p' })).toMatch(/schema/)
    expect(validateToolArgs('generate_object', { schema: {}, prompt: 'p', mode: 'x' })).toMatch(
      /one of/,
    )
    expect(
      validateToolArgs('generate_object', { schema: {}, prompt: 'p', max_repair_attempts: 6 }),
    ).toMatch(/max_repair_attempts/)
    expect(
      validateToolArgs('generate_object', { schema: {}, prompt: 'p', schema_name: 'x'.repeat(60) }),
    ).toMatch(/schema_name/)
    expect(
      validateToolArgs('generate_object', { schema: {}, prompt: 'p', timeout_ms: 600_001 }),
    ).toMatch(/timeout_ms/)
    expect(validateToolArgs('generate_object', { schema: {}, prompt: 'p', extra: 1 })).toMatch(
      /unknown property/,
    )
  })

  it('refuses a system prompt over 32 KiB of UTF-8 even under the character bound', async () => {
    const session = await Agent.create({ model: model() }).session(memoryWorkspace())
    const result = await session.tool('generate_object', {
      schema: PERSON_SCHEMA,
      prompt: 'p',
      system: 'é'.repeat(20_000),
    })
    expect(result.errorKind?.type).toBe('invalid_argument')
    expect(result.output).toMatch(/system/)
  })

  it('works with a model that does not stream (one generate per round, no partials)', async () => {
    const id = 'no-stream'
    fake.program(id, [
      { text: JSON.stringify({ ...ADA, age: 'old' }) },
      { text: JSON.stringify(ADA) },
    ])
    const m = openAICompatible({
      baseURL: fake.baseURL,
      model: id,
      capabilities: { streaming: false },
    })
    const session = await Agent.create({ model: m }).session(memoryWorkspace())
    const result = await session.tool('generate_object', {
      schema: PERSON_SCHEMA,
      prompt: 'p',
      mode: 'json',
    })
    expect(result.exitCode).toBe(0)
    expect(result.metadata).toMatchObject({ object: ADA, repair_rounds: 1, mode_used: 'json' })
    const bodies = fake.requests.filter((r) => r.body.model === id).map((r) => r.body.stream)
    expect(bodies).toEqual([undefined, undefined])
  })

  it('is cancelled mid-stream by the caller, with no object', async () => {
    const id = 'cancel-me'
    fake.program(id, [{ text: JSON.stringify(ADA), delayMs: 100 }])
    const m = openAICompatible({ baseURL: fake.baseURL, model: id })
    const session = await Agent.create({ model: m }).session(memoryWorkspace())
    const controller = new AbortController()
    const events: SessionEvent[] = []
    const stop = new AbortController()
    void (async () => {
      for await (const e of session.events({ signal: stop.signal })) events.push(e)
    })()
    setTimeout(() => controller.abort(), 350)
    const started = Date.now()
    const result = await session.tool(
      'generate_object',
      { schema: PERSON_SCHEMA, prompt: 'p' },
      { signal: controller.signal },
    )
    stop.abort()
    expect(result.errorKind?.type).toBe('cancelled')
    expect(result.metadata?.object).toBeUndefined()
    expect(Date.now() - started).toBeLessThan(2000)
    expect(
      events.some((e) => e.type === 'tool_output_delta' && e.delta.startsWith('{"final"')),
    ).toBe(false)
  })

  it('counts usage over every round', async () => {
    const id = 'usage'
    fake.program(id, [
      { text: '{"oops":', usage: { input: 100, output: 5 } },
      { text: JSON.stringify(ADA), usage: { input: 120, output: 40 } },
    ])
    const m = openAICompatible({ baseURL: fake.baseURL, model: id })
    const session = await Agent.create({ model: m }).session(memoryWorkspace())
    const result = await session.tool('generate_object', {
      schema: PERSON_SCHEMA,
      prompt: 'p',
      mode: 'prompt',
    })
    expect(result.metadata?.usage).toEqual({ input_tokens: 220, output_tokens: 45 })
  })
})
