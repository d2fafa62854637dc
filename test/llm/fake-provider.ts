// A scripted loopback server speaking the OpenAI chat-completions and Anthropic messages wire
// protocols, JSON and SSE, framed as the providers frame them. Each request takes the next step
// of the script; the requests are recorded for assertions.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A tool call the fake answers with; `chunks` split its arguments over stream events. */
export interface FakeToolCall {
  name: string
  arguments: string
  chunks?: string[]
}

/** One scripted answer. */
export type FakeStep =
  | {
      text?: string
      /** The text's stream deltas (default: pieces of up to 8 characters). */
      chunks?: string[]
      toolCalls?: FakeToolCall[]
      /** Wait before each stream event (slow tokens), and before the first. */
      delayMs?: number
      /** End the connection after this many stream events (a stream cut mid-way). */
      cutAfterEvents?: number
      /** Send the provider's in-stream error event after this many stream events, then end. */
      errorAfterEvents?: number
      /** Its kind: `overloaded` (default), `rate_limit` or `invalid_request`. */
      errorKind?: 'overloaded' | 'rate_limit' | 'invalid_request'
      finishReason?: string
      usage?: { input: number; output: number }
      /** Keep the stream open after `holdAfterEvents` events (default 1) until this settles. */
      hold?: Promise<void>
      holdAfterEvents?: number
    }
  | { status: number; message?: string; headers?: Record<string, string> }

/** A request the fake received. */
export interface FakeRequest {
  protocol: 'openai' | 'anthropic'
  path: string
  headers: Record<string, string | string[] | undefined>
  body: Record<string, unknown>
}

/** A running fake. */
export interface FakeProvider {
  /** `http://127.0.0.1:<port>/v1`: the baseURL of both providers. */
  baseURL: string
  requests: FakeRequest[]
  /** Steps still to be served. */
  script: FakeStep[]
  /** Replace the script (and drop every model's own script). */
  reset(script: FakeStep[]): void
  /** A script of its own for requests naming `model` (they take no step of the shared one). */
  program(model: string, steps: FakeStep[]): void
  close(): Promise<void>
}

const MODEL_CREATED = 1_767_225_600

function split(text: string, size = 8): string[] {
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

function thirds(text: string): string[] {
  if (text.length < 3) return [text]
  const a = Math.floor(text.length / 3)
  return [text.slice(0, a), text.slice(a, 2 * a), text.slice(2 * a)]
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

type Step = Exclude<FakeStep, { status: number }>

function openAIEvents(step: Step, model: string, id: string): string[] {
  const base = {
    id,
    object: 'chat.completion.chunk',
    created: MODEL_CREATED,
    model,
    system_fingerprint: 'fp_fake',
  }
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null })}\n\n`
  const events = [chunk({ role: 'assistant', content: '', refusal: null })]
  const text = step.text ?? ''
  for (const piece of step.chunks ?? split(text)) events.push(chunk({ content: piece }))
  ;(step.toolCalls ?? []).forEach((call, index) => {
    events.push(
      chunk({
        tool_calls: [
          {
            index,
            id: `call_${id}_${index}`,
            type: 'function',
            function: { name: call.name, arguments: '' },
          },
        ],
      }),
    )
    for (const piece of call.chunks ?? thirds(call.arguments))
      events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))
  })
  const finish = step.finishReason ?? ((step.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop')
  events.push(chunk({}, finish))
  const usage = step.usage ?? { input: 11, output: events.length }
  events.push(
    `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output } })}\n\n`,
  )
  events.push('data: [DONE]\n\n')
  return events
}

function openAIJson(step: Step, model: string, id: string): Record<string, unknown> {
  const calls = step.toolCalls ?? []
  const usage = step.usage ?? { input: 11, output: 7 }
  return {
    id,
    object: 'chat.completion',
    created: MODEL_CREATED,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: step.text ?? (calls.length > 0 ? null : ''),
          refusal: null,
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((c, i) => ({
                  id: `call_${id}_${i}`,
                  type: 'function',
                  function: { name: c.name, arguments: c.arguments },
                })),
              }
            : {}),
        },
        logprobs: null,
        finish_reason: step.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop'),
      },
    ],
    usage: {
      prompt_tokens: usage.input,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.output,
    },
    system_fingerprint: 'fp_fake',
  }
}

function sse(event: string, data: Record<string, unknown>): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}

function anthropicEvents(step: Step, model: string, id: string): string[] {
  const usage = step.usage ?? { input: 11, output: 0 }
  const events = [
    sse('message_start', {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input, output_tokens: 1 },
      },
    }),
  ]
  let block = 0
  if (step.text !== undefined && step.text !== '') {
    events.push(
      sse('content_block_start', {
        type: 'content_block_start',
        index: block,
        content_block: { type: 'text', text: '' },
      }),
    )
    events.push(sse('ping', { type: 'ping' }))
    for (const piece of step.chunks ?? split(step.text))
      events.push(
        sse('content_block_delta', {
          type: 'content_block_delta',
          index: block,
          delta: { type: 'text_delta', text: piece },
        }),
      )
    events.push(sse('content_block_stop', { type: 'content_block_stop', index: block }))
    block++
  }
  ;(step.toolCalls ?? []).forEach((call, i) => {
    events.push(
      sse('content_block_start', {
        type: 'content_block_start',
        index: block,
        content_block: { type: 'tool_use', id: `toolu_${id}_${i}`, name: call.name, input: {} },
      }),
    )
    for (const piece of call.chunks ?? thirds(call.arguments))
      events.push(
        sse('content_block_delta', {
          type: 'content_block_delta',
          index: block,
          delta: { type: 'input_json_delta', partial_json: piece },
        }),
      )
    events.push(sse('content_block_stop', { type: 'content_block_stop', index: block }))
    block++
  })
  const stop = step.finishReason ?? ((step.toolCalls ?? []).length > 0 ? 'tool_use' : 'end_turn')
  events.push(
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: step.usage?.output ?? events.length },
    }),
  )
  events.push(sse('message_stop', { type: 'message_stop' }))
  return events
}

function anthropicJson(step: Step, model: string, id: string): Record<string, unknown> {
  const content: Record<string, unknown>[] = []
  if (step.text !== undefined && step.text !== '') content.push({ type: 'text', text: step.text })
  ;(step.toolCalls ?? []).forEach((c, i) => {
    let input: unknown
    try {
      input = JSON.parse(c.arguments)
    } catch {
      input = {}
    }
    content.push({ type: 'tool_use', id: `toolu_${id}_${i}`, name: c.name, input })
  })
  const usage = step.usage ?? { input: 11, output: 7 }
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: step.finishReason ?? ((step.toolCalls ?? []).length > 0 ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: { input_tokens: usage.input, output_tokens: usage.output },
  }
}

function errorBody(protocol: FakeRequest['protocol'], status: number, message: string): string {
  if (protocol === 'openai')
    return JSON.stringify({
      error: {
        message,
        type:
          status === 429 ? 'requests' : status >= 500 ? 'server_error' : 'invalid_request_error',
        param: null,
        code: status === 429 ? 'rate_limit_exceeded' : null,
      },
    })
  const type =
    status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error'
  return JSON.stringify({ type: 'error', error: { type, message } })
}

function streamError(
  protocol: FakeRequest['protocol'],
  kind: 'overloaded' | 'rate_limit' | 'invalid_request',
): string {
  if (protocol === 'anthropic') {
    const type = `${kind}_error`
    return sse('error', { type: 'error', error: { type, message: `scripted ${type}` } })
  }
  const error =
    kind === 'rate_limit'
      ? { message: 'scripted rate limit', type: 'requests', code: 'rate_limit_exceeded' }
      : kind === 'invalid_request'
        ? { message: 'scripted invalid request', type: 'invalid_request_error', code: null }
        : { message: 'scripted overload', type: 'server_error', code: null }
  return `data: ${JSON.stringify({ error })}\n\n`
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** Start the fake on 127.0.0.1 with `script`. */
export async function startFakeProvider(script: FakeStep[] = []): Promise<FakeProvider> {
  const requests: FakeRequest[] = []
  const state = { script: [...script], seq: 0 }
  const byModel = new Map<string, FakeStep[]>()
  const sockets = new Set<import('node:net').Socket>()

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0]!
    // Pages of another origin (the web demo in Chromium) call the fake directly.
    res.setHeader('access-control-allow-origin', '*')
    res.setHeader('access-control-expose-headers', 'retry-after')
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': req.headers['access-control-request-headers'] ?? '*',
        'access-control-max-age': '600',
      })
      res.end()
      return
    }
    const protocol =
      path === '/v1/chat/completions' ? 'openai' : path === '/v1/messages' ? 'anthropic' : undefined
    if (req.method !== 'POST' || protocol === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }))
      return
    }
    const text = await readBody(req)
    let body: Record<string, unknown>
    try {
      body = JSON.parse(text) as Record<string, unknown>
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' })
      res.end(errorBody(protocol, 400, 'the body is not JSON'))
      return
    }
    requests.push({ protocol, path, headers: req.headers, body })
    const model = typeof body.model === 'string' ? body.model : 'fake'
    const step = (byModel.get(model) ?? state.script).shift() ?? {
      status: 500,
      message: 'fake provider: script exhausted',
    }
    const id = protocol === 'openai' ? `chatcmpl-${++state.seq}` : `msg_${++state.seq}`
    if ('status' in step) {
      res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers })
      res.end(errorBody(protocol, step.status, step.message ?? `scripted ${step.status}`))
      return
    }
    if (body.stream !== true) {
      if (step.delayMs) await sleep(step.delayMs)
      const json =
        protocol === 'openai' ? openAIJson(step, model, id) : anthropicJson(step, model, id)
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(json))
      return
    }
    const events =
      protocol === 'openai' ? openAIEvents(step, model, id) : anthropicEvents(step, model, id)
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    })
    res.flushHeaders()
    for (let i = 0; i < events.length; i++) {
      if (step.cutAfterEvents !== undefined && i >= step.cutAfterEvents) {
        req.socket.destroy()
        return
      }
      if (step.errorAfterEvents !== undefined && i >= step.errorAfterEvents) {
        res.end(streamError(protocol, step.errorKind ?? 'overloaded'))
        return
      }
      if (step.delayMs) await sleep(step.delayMs)
      if (step.hold && i === (step.holdAfterEvents ?? 1)) await step.hold
      if (res.destroyed) return
      res.write(events[i])
    }
    res.end()
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500)
      res.end(String(error))
    })
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    get script() {
      return state.script
    },
    reset(next) {
      state.script = [...next]
      byModel.clear()
      requests.length = 0
    },
    program(model, steps) {
      byModel.set(model, [...steps])
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}
