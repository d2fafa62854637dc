// AI SDK interop both ways: session tools driven by `ai`'s generateText, and an AI SDK
// LanguageModelV3 used as this project's LanguageModel. The model behind both is the fake.
import { APICallError, type LanguageModelV3 } from '@ai-sdk/provider'
import { generateText, stepCountIs, streamText } from 'ai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  Agent,
  IsoagentError,
  fromAISDK,
  memoryWorkspace,
  type ModelStreamPart,
} from '../../adapters/index.ts'
import { toAISDKTools } from '../../adapters/ai-sdk/index.ts'
import { startFakeProvider, type FakeProvider } from './fake-provider.ts'
import { fakeV3Model } from './v3-model.ts'

let fake: FakeProvider
beforeAll(async () => {
  fake = await startFakeProvider()
})
afterAll(() => fake.close())
beforeEach(() => fake.reset([]))

type WireMessage = { role: string; content: unknown; tool_call_id?: string }

describe('session tools as AI SDK tools', () => {
  it('generateText runs two tool steps through the session, then answers', async () => {
    const session = await Agent.create().session(memoryWorkspace({ 'notes.txt': 'alpha\nbeta\n' }))
    fake.reset([
      { toolCalls: [{ name: 'read', arguments: '{"file_path":"notes.txt"}' }] },
      { toolCalls: [{ name: 'write', arguments: '{"file_path":"out.txt","content":"gamma"}' }] },
      { text: 'Read and wrote.' },
    ])
    const tools = toAISDKTools(session)
    expect(Object.keys(tools)).toEqual(session.toolNames())
    const result = await generateText({
      model: fakeV3Model(fake.baseURL),
      tools,
      prompt: 'Copy things',
      stopWhen: stepCountIs(5),
    })
    expect(result.text).toBe('Read and wrote.')
    expect(result.steps).toHaveLength(3)
    const second = fake.requests[1]!.body.messages as WireMessage[]
    expect(String(second.at(-1)!.content)).toContain('alpha')
    expect(await session.readFile('out.txt')).toContain('gamma')
    const wireTools = fake.requests[0]!.body.tools as {
      function: { name: string; parameters: unknown }
    }[]
    expect(wireTools.find((t) => t.function.name === 'read')!.function.parameters).toEqual(
      session.toolDefinitions().find((d) => d.name === 'read')!.parameters,
    )
  })

  it('a denied call reaches the model as a tool error, and the workspace is unchanged', async () => {
    const session = await Agent.create().session(memoryWorkspace({}), {
      permissions: { deny: ['write'] },
    })
    fake.reset([
      { toolCalls: [{ name: 'write', arguments: '{"file_path":"x.txt","content":"no"}' }] },
      { text: 'Could not write.' },
    ])
    const result = await streamText({
      model: fakeV3Model(fake.baseURL),
      tools: toAISDKTools(session),
      prompt: 'Write x',
      stopWhen: stepCountIs(3),
    })
    expect(await result.text).toBe('Could not write.')
    const toolMessage = (fake.requests[1]!.body.messages as WireMessage[]).at(-1)!
    expect(toolMessage.role).toBe('tool')
    expect(String(toolMessage.content)).toMatch(/denied|permission/i)
    expect((await session.tool('ls', {})).output).not.toContain('x.txt')
  })
})

describe('fromAISDK', () => {
  it('streams text and split tool calls, and generates whole answers', async () => {
    const model = fromAISDK(fakeV3Model(fake.baseURL))
    expect(model.provider).toBe('fake')
    fake.reset([
      { text: 'Hello world' },
      { toolCalls: [{ name: 'f', arguments: '{"a":1}', chunks: ['{"a"', ':1}'] }] },
      { text: 'whole' },
    ])
    const parts: ModelStreamPart[] = []
    for await (const p of model.stream({ messages: [{ role: 'user', content: 'hi' }] }))
      parts.push(p)
    expect(parts.flatMap((p) => (p.type === 'text_delta' ? [p.delta] : [])).join('')).toBe(
      'Hello world',
    )
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' })
    const toolParts: ModelStreamPart[] = []
    for await (const p of model.stream({
      messages: [{ role: 'user', content: 'call f' }],
      tools: [{ name: 'f', description: 'f', parameters: { type: 'object' } }],
      toolChoice: { name: 'f' },
    }))
      toolParts.push(p)
    expect(
      toolParts
        .filter((p) => p.type === 'tool_call_delta')
        .map((p) => p.argumentsDelta)
        .join(''),
    ).toBe('{"a":1}')
    expect(toolParts.find((p) => p.type === 'tool_call')).toMatchObject({
      call: { name: 'f', arguments: '{"a":1}' },
    })
    const whole = await model.generate({ messages: [{ role: 'user', content: 'x' }] })
    expect(whole.text).toBe('whole')
  })

  it('maps the AI SDK call options: tools, forced choice, JSON response format', async () => {
    const v3 = fakeV3Model(fake.baseURL)
    fake.reset([{ text: '{}' }])
    await fromAISDK(v3).generate({
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'u' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'c', name: 'f', arguments: '{"x":2}' }],
        },
        { role: 'tool', toolCallId: 'c', toolName: 'f', content: 'bad', isError: true },
      ],
      tools: [{ name: 'f', description: 'd', parameters: { type: 'object' } }],
      toolChoice: { name: 'f' },
      responseFormat: { type: 'json_schema', name: 'n', schema: { type: 'object' }, strict: true },
    })
    const call = v3.calls[0]!
    expect(call.toolChoice).toEqual({ type: 'tool', toolName: 'f' })
    expect(call.responseFormat).toEqual({ type: 'json', schema: { type: 'object' }, name: 'n' })
    expect(call.prompt.at(-1)).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c',
          toolName: 'f',
          output: { type: 'error-text', value: 'bad' },
        },
      ],
    })
    expect(call.prompt[2]).toMatchObject({ content: [{ type: 'tool-call', input: { x: 2 } }] })
  })

  it('serves generate_object in tool and strict mode, repairs included', async () => {
    const ada = { name: 'Ada', age: 36 }
    const schema = {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'age'],
      properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } },
    }
    fake.reset([
      { toolCalls: [{ name: 'person', arguments: '{"name":"Ada","age":-3}' }] },
      { toolCalls: [{ name: 'person', arguments: JSON.stringify(ada) }] },
      { text: JSON.stringify(ada) },
    ])
    const model = fromAISDK(fakeV3Model(fake.baseURL))
    const session = await Agent.create({ model }).session(memoryWorkspace())
    const byTool = await session.tool('generate_object', {
      schema,
      prompt: 'Ada',
      schema_name: 'person',
      mode: 'tool',
    })
    expect(byTool.metadata).toMatchObject({ object: ada, mode_used: 'tool', repair_rounds: 1 })
    expect(fake.requests[1]!.body.tool_choice).toEqual({
      type: 'function',
      function: { name: 'person' },
    })
    expect(JSON.stringify(fake.requests[1]!.body.messages)).toContain('/age')
    const strict = await session.tool('generate_object', { schema, prompt: 'Ada' })
    expect(strict.metadata).toMatchObject({ object: ada, mode_used: 'strict', repair_rounds: 0 })
    expect(fake.requests[2]!.body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { schema },
    })
  })

  it("types the AI SDK's APICallErrors: 429 with Retry-After, 4xx, 5xx", async () => {
    const throwing = (error: unknown): LanguageModelV3 => ({
      specificationVersion: 'v3',
      provider: 'p',
      modelId: 'm',
      supportedUrls: {},
      doGenerate: () => Promise.reject(error),
      doStream: () => Promise.reject(error),
    })
    const apiError = (statusCode: number, responseHeaders?: Record<string, string>) =>
      new APICallError({
        message: `status ${statusCode}`,
        url: 'http://127.0.0.1/x',
        requestBodyValues: {},
        statusCode,
        ...(responseHeaders ? { responseHeaders } : {}),
      })
    const codeOf = async (error: unknown) => {
      try {
        await fromAISDK(throwing(error)).generate({ messages: [] })
      } catch (e) {
        expect(e).toBeInstanceOf(IsoagentError)
        return e as IsoagentError
      }
      throw new Error('expected a failure')
    }
    const limited = await codeOf(apiError(429, { 'retry-after': '3' }))
    expect([limited.code, limited.data.retry_after_ms]).toEqual(['rate_limited', 3000])
    expect((await codeOf(apiError(400))).code).toBe('invalid_argument')
    expect((await codeOf(apiError(502))).code).toBe('transport')
    expect((await codeOf(new TypeError('fetch failed'))).code).toBe('transport')
    expect(() => fromAISDK({} as LanguageModelV3)).toThrow(/LanguageModelV3/)
  })
})
