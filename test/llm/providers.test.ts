// Both providers against the scripted loopback fake: every scripted case, streamed and whole.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  IsoagentError,
  anthropic,
  openAICompatible,
  parseRetryAfter,
  toAnthropicTools,
  toOpenAITools,
  type LanguageModel,
  type ModelRequest,
  type ModelStreamPart,
} from '../../src/index.ts'
import { startFakeProvider, type FakeProvider } from './fake-provider.ts'

let fake: FakeProvider
beforeAll(async () => {
  fake = await startFakeProvider()
})
afterAll(() => fake.close())
beforeEach(() => fake.reset([]))

type Protocol = 'openai' | 'anthropic'

function model(protocol: Protocol, extra: Record<string, unknown> = {}): LanguageModel {
  const common = {
    baseURL: fake.baseURL,
    apiKey: 'sk-test',
    model: 'fake-1',
    retryDelayMs: 10,
    ...extra,
  }
  return protocol === 'openai' ? openAICompatible(common) : anthropic(common)
}

async function collect(
  m: LanguageModel,
  request: ModelRequest,
  signal?: AbortSignal,
): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = []
  for await (const p of m.stream(request, signal ? { signal } : {})) parts.push(p)
  return parts
}

async function failure(promise: Promise<unknown>): Promise<IsoagentError> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(IsoagentError)
    return error as IsoagentError
  }
  throw new Error('expected a failure')
}

const hello: ModelRequest = {
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Say hello' },
  ],
}

const weatherTool = {
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
}

describe.each<Protocol>(['openai', 'anthropic'])('%s provider', (protocol) => {
  it('streams text deltas, then finish with usage; the request is the wire format', async () => {
    fake.reset([{ text: 'Hello there, friend!', usage: { input: 5, output: 4 } }])
    const parts = await collect(model(protocol), hello)
    const text = parts.flatMap((p) => (p.type === 'text_delta' ? [p.delta] : [])).join('')
    expect(text).toBe('Hello there, friend!')
    expect(parts.filter((p) => p.type === 'text_delta').length).toBeGreaterThan(1)
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: 'stop',
      usage: { inputTokens: 5, outputTokens: 4 },
    })
    const [req] = fake.requests
    expect(req!.body.stream).toBe(true)
    expect(req!.body.model).toBe('fake-1')
    if (protocol === 'openai') {
      expect(req!.headers.authorization).toBe('Bearer sk-test')
      expect(req!.body.stream_options).toEqual({ include_usage: true })
      expect(req!.body.messages).toEqual([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello' },
      ])
    } else {
      expect(req!.headers['x-api-key']).toBe('sk-test')
      expect(req!.headers['anthropic-version']).toBe('2023-06-01')
      expect(req!.body.system).toBe('Be brief.')
      expect(req!.body.max_tokens).toBe(4096)
      expect(req!.body.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Say hello' }] },
      ])
    }
  })

  it('generates a whole answer without streaming', async () => {
    fake.reset([{ text: 'Hi.', usage: { input: 3, output: 2 } }])
    const response = await model(protocol).generate(hello)
    expect(response).toEqual({
      text: 'Hi.',
      toolCalls: [],
      finishReason: 'stop',
      usage: { inputTokens: 3, outputTokens: 2 },
    })
    expect(fake.requests[0]!.body.stream).toBeUndefined()
  })

  it('streams one tool call whose arguments are split over chunks, forced by name', async () => {
    fake.reset([
      {
        toolCalls: [
          {
            name: 'get_weather',
            arguments: '{"city":"Paris"}',
            chunks: ['{"ci', 'ty":"Pa', 'ris"}'],
          },
        ],
      },
    ])
    const parts = await collect(model(protocol), {
      ...hello,
      tools: [weatherTool],
      toolChoice: { name: 'get_weather' },
    })
    const deltas = parts.filter((p) => p.type === 'tool_call_delta')
    expect(deltas.map((d) => d.argumentsDelta).join('')).toBe('{"city":"Paris"}')
    expect(deltas.filter((d) => d.argumentsDelta !== '').length).toBe(3)
    expect(deltas[0]).toMatchObject({ index: 0, name: 'get_weather' })
    const call = parts.find((p) => p.type === 'tool_call')
    expect(call).toMatchObject({
      type: 'tool_call',
      index: 0,
      call: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    })
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool_calls' })
    const body = fake.requests[0]!.body
    if (protocol === 'openai') {
      expect(body.tools).toEqual(toOpenAITools([weatherTool]))
      expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } })
    } else {
      expect(body.tools).toEqual(toAnthropicTools([weatherTool]))
      expect(body.tool_choice).toEqual({ type: 'tool', name: 'get_weather' })
    }
  })

  it('streams several tool calls, and whole answers carry them too', async () => {
    const calls = [
      { name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { name: 'get_weather', arguments: '{"city":"Rome"}' },
    ]
    fake.reset([{ toolCalls: calls }, { toolCalls: calls }])
    const parts = await collect(model(protocol), { ...hello, tools: [weatherTool] })
    const done = parts.flatMap((p) => (p.type === 'tool_call' ? [p] : []))
    expect(done.map((p) => [p.index, p.call.arguments])).toEqual([
      [0, '{"city":"Oslo"}'],
      [1, '{"city":"Rome"}'],
    ])
    expect(new Set(done.map((p) => p.call.id)).size).toBe(2)
    const whole = await model(protocol).generate({ ...hello, tools: [weatherTool] })
    expect(whole.finishReason).toBe('tool_calls')
    expect(whole.toolCalls.map((c) => JSON.parse(c.arguments) as unknown)).toEqual([
      { city: 'Oslo' },
      { city: 'Rome' },
    ])
  })

  it('hands invalid JSON arguments on raw (the caller decides)', async () => {
    fake.reset([{ toolCalls: [{ name: 'get_weather', arguments: '{"city": Par' }] }])
    const parts = await collect(model(protocol), { ...hello, tools: [weatherTool] })
    expect(parts.find((p) => p.type === 'tool_call')).toMatchObject({
      call: { arguments: '{"city": Par' },
    })
  })

  it('replays a conversation with tool calls and results in the wire format', async () => {
    fake.reset([{ text: 'Sunny.' }])
    await collect(model(protocol), {
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
        },
        { role: 'tool', toolCallId: 'c1', toolName: 'get_weather', content: 'sunny' },
      ],
      tools: [weatherTool],
    })
    const messages = fake.requests[0]!.body.messages
    if (protocol === 'openai') {
      expect(messages).toEqual([
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'c1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      ])
    } else {
      expect(messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Paris' } }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'sunny' }] },
      ])
    }
  })

  it('retries a 429 after the server-named delay (retry-after-ms), then answers', async () => {
    fake.reset([{ status: 429, headers: { 'retry-after-ms': '120' } }, { text: 'ok' }])
    const started = Date.now()
    const response = await model(protocol).generate(hello)
    expect(response.text).toBe('ok')
    expect(Date.now() - started).toBeGreaterThanOrEqual(110)
    expect(fake.requests).toHaveLength(2)
  })

  it('fails a 429 with rate_limited and the parsed Retry-After when retries run out', async () => {
    fake.reset([{ status: 429, headers: { 'retry-after': '2' }, message: 'slow down' }])
    const error = await failure(model(protocol, { maxRetries: 0 }).generate(hello))
    expect(error.code).toBe('rate_limited')
    expect(error.data.retry_after_ms).toBe(2000)
    expect(error.message).toContain('slow down')
  })

  it('does not wait for a Retry-After beyond the cap', async () => {
    fake.reset([{ status: 429, headers: { 'retry-after': '120' } }, { text: 'never' }])
    const started = Date.now()
    const error = await failure(model(protocol, { maxRetryDelayMs: 1000 }).generate(hello))
    expect(error.code).toBe('rate_limited')
    expect(error.data.retry_after_ms).toBe(120_000)
    expect(Date.now() - started).toBeLessThan(1000)
    expect(fake.requests).toHaveLength(1)
  })

  it('retries 500s with backoff (bounded) and fails with transport after the last', async () => {
    fake.reset([{ status: 500 }, { status: 503 }, { text: 'recovered' }])
    expect((await model(protocol).generate(hello)).text).toBe('recovered')
    fake.reset([{ status: 500 }, { status: 500 }, { status: 500 }, { text: 'too late' }])
    const error = await failure(collect(model(protocol), hello))
    expect(error.code).toBe('transport')
    expect(error.data.status).toBe(500)
    expect(fake.requests).toHaveLength(3)
  })

  it('fails a 4xx with invalid_argument carrying the provider message, without retrying', async () => {
    fake.reset([{ status: 400, message: 'messages: field required' }, { text: 'no' }])
    const error = await failure(model(protocol).generate(hello))
    expect(error.code).toBe('invalid_argument')
    expect(error.message).toContain('messages: field required')
    expect(error.data.status).toBe(400)
    expect(fake.requests).toHaveLength(1)
  })

  it('fails a stream cut mid-way with transport', async () => {
    fake.reset([{ text: 'a long answer that never finishes', cutAfterEvents: 3 }])
    const parts: ModelStreamPart[] = []
    const error = await failure(
      (async () => {
        for await (const p of model(protocol).stream(hello)) parts.push(p)
      })(),
    )
    expect(error.code).toBe('transport')
    expect(parts.some((p) => p.type === 'finish')).toBe(false)
  })

  it('types an in-stream error event by its kind, after the deltas before it', async () => {
    const kinds = [
      ['overloaded', 'transport'],
      ['rate_limit', 'rate_limited'],
      ['invalid_request', 'invalid_argument'],
    ] as const
    for (const [errorKind, code] of kinds) {
      fake.reset([{ text: 'partial answer here', errorAfterEvents: 5, errorKind }])
      const parts: ModelStreamPart[] = []
      const error = await failure(
        (async () => {
          for await (const p of model(protocol).stream(hello)) parts.push(p)
        })(),
      )
      expect(error.code).toBe(code)
      expect(error.message).toContain('scripted')
      expect(parts.some((p) => p.type === 'text_delta')).toBe(true)
      expect(fake.requests).toHaveLength(1)
    }
  })

  it('fails slow tokens past the deadline with timeout, and an abort with cancelled', async () => {
    fake.reset([{ text: 'slow slow slow slow', delayMs: 150 }])
    const error = await failure(collect(model(protocol, { timeoutMs: 300 }), hello))
    expect(error.code).toBe('timeout')
    fake.reset([{ text: 'slow slow slow slow', delayMs: 150 }])
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 200)
    const cancelled = await failure(collect(model(protocol), hello, controller.signal))
    expect(cancelled.code).toBe('cancelled')
    fake.reset([{ text: 'slow', delayMs: 400 }])
    const timed = await failure(
      model(protocol).generate(hello, { signal: AbortSignal.timeout(100) }),
    )
    expect(timed.code).toBe('timeout')
  })

  it('fails an unreachable endpoint with transport after its retries', async () => {
    const m =
      protocol === 'openai'
        ? openAICompatible({ baseURL: 'http://127.0.0.1:9/v1', model: 'x', retryDelayMs: 1 })
        : anthropic({ baseURL: 'http://127.0.0.1:9/v1', model: 'x', retryDelayMs: 1 })
    const error = await failure(m.generate(hello))
    expect(error.code).toBe('transport')
  })

  it('refuses bad options with invalid_argument', () => {
    const make = protocol === 'openai' ? openAICompatible : anthropic
    expect(() => make({ baseURL: 'not a url', model: 'x' })).toThrow(/baseURL/)
    expect(() => make({ baseURL: 'ftp://h/v1', model: 'x' })).toThrow(/baseURL/)
    expect(() => make({ baseURL: fake.baseURL, model: '' })).toThrow(/model/)
    expect(() => make({ baseURL: fake.baseURL, model: 'x', maxRetries: -1 })).toThrow(/maxRetries/)
  })
})

describe('parseRetryAfter', () => {
  it('reads retry-after-ms, Retry-After seconds and HTTP dates; null when absent or bad', () => {
    const now = Date.parse('2026-12-01T00:00:00Z')
    const h = (init: Record<string, string>) => new Headers(init)
    expect(parseRetryAfter(h({ 'retry-after-ms': '1500.2' }), now)).toBe(1501)
    expect(parseRetryAfter(h({ 'retry-after-ms': '20', 'retry-after': '9' }), now)).toBe(20)
    expect(parseRetryAfter(h({ 'retry-after': '3' }), now)).toBe(3000)
    expect(parseRetryAfter(h({ 'retry-after': 'Tue, 01 Dec 2026 00:00:05 GMT' }), now)).toBe(5000)
    expect(parseRetryAfter(h({ 'retry-after': 'Mon, 30 Nov 2026 00:00:00 GMT' }), now)).toBe(0)
    expect(parseRetryAfter(h({ 'retry-after': 'soon' }), now)).toBeNull()
    expect(parseRetryAfter(h({}), now)).toBeNull()
  })
})

describe('provider-specific wire details', () => {
  it('openai: response_format json_schema strict and json_object; headers merge', async () => {
    fake.reset([{ text: '{}' }, { text: '{}' }])
    const m = openAICompatible({ baseURL: fake.baseURL, model: 'm', headers: { 'x-extra': 'yes' } })
    const schema = { type: 'object', properties: {}, additionalProperties: false }
    await m.generate({
      ...hello,
      responseFormat: { type: 'json_schema', name: 'thing', schema, strict: true },
    })
    await m.generate({ ...hello, responseFormat: { type: 'json_object' }, toolChoice: 'required' })
    expect(fake.requests[0]!.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'thing', schema, strict: true },
    })
    expect(fake.requests[1]!.body.response_format).toEqual({ type: 'json_object' })
    expect(fake.requests[1]!.body.tool_choice).toBe('required')
    expect(fake.requests[0]!.headers['x-extra']).toBe('yes')
    expect(fake.requests[0]!.headers.authorization).toBeUndefined()
    expect(m.capabilities).toEqual({
      tools: true,
      toolChoice: true,
      jsonSchema: true,
      jsonObject: true,
      streaming: true,
    })
  })

  it('anthropic: JSON response formats are unsupported; capabilities say so', async () => {
    const m = anthropic({ baseURL: fake.baseURL, model: 'm' })
    expect(m.capabilities.jsonSchema).toBe(false)
    expect(m.capabilities.jsonObject).toBe(false)
    const error = await failure(m.generate({ ...hello, responseFormat: { type: 'json_object' } }))
    expect(error.code).toBe('unsupported')
    expect(fake.requests).toHaveLength(0)
  })

  it('anthropic: consecutive tool results merge into one user turn', async () => {
    fake.reset([{ text: 'done' }])
    await anthropic({ baseURL: fake.baseURL, model: 'm' }).generate({
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: 'calling',
          toolCalls: [
            { id: 'a', name: 't', arguments: '{}' },
            { id: 'b', name: 't', arguments: 'not json' },
          ],
        },
        { role: 'tool', toolCallId: 'a', toolName: 't', content: 'ra' },
        { role: 'tool', toolCallId: 'b', toolName: 't', content: 'rb', isError: true },
      ],
    })
    const messages = fake.requests[0]!.body.messages as { role: string; content: unknown[] }[]
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(messages[1]!.content).toEqual([
      { type: 'text', text: 'calling' },
      { type: 'tool_use', id: 'a', name: 't', input: {} },
      { type: 'tool_use', id: 'b', name: 't', input: {} },
    ])
    expect(messages[2]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'a', content: 'ra' },
      { type: 'tool_result', tool_use_id: 'b', content: 'rb', is_error: true },
    ])
  })
})
