// The HTTP API suite: written against a base URL and fetch only, so the same cases run against
// the Node server and the Worker in workerd.
import { readFileSync } from 'node:fs'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { startFakeProvider, type FakeProvider } from '../llm/fake-provider.ts'
import { SseReader, type SseFrame } from './sse-client.ts'

/** How a case wants its server configured. */
export interface CaseServerConfig {
  token: string
  /** Rules of every session; the suite asks on `write(ask/**)`. */
  permissions: { ask: string[] }
  maxSessions?: number
  sessionIdleMs?: number
  /** The model of the sessions' agent loop (a loopback fake of the provider); none: no model. */
  model?: { protocol: 'openai' | 'anthropic'; baseURL: string }
  /** Sessions offer `dynamic_workflow` (the Worker journals runs in the session's object). */
  workflows?: boolean
}

/** A server the suite started. */
export interface CaseServer {
  baseUrl: string
  close(): Promise<void>
}

/** Facts the suite checks that depend on the workspace behind the server. */
export interface CaseFacts {
  /** The tools its sessions offer, in order. */
  tools: string[]
  /**
   * Whether sessions share one workspace (default true). A Worker over memory gives each
   * session its own, inside the session's Durable Object.
   */
  sharedWorkspace?: boolean
  /** The wire protocol the server's model speaks to the fake (default openai). */
  modelProtocol?: 'openai' | 'anthropic'
}

const TOKEN = 'test-token-0123456789'
const ASK = { ask: ['write(ask/**)'] }
const MiB = 1024 * 1024
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string
}

interface ToolResultJson {
  name: string
  output: string
  exitCode: number
  errorKind?: { type: string }
  metadata?: Record<string, unknown>
}

/** A small client of one server. */
export class Api {
  readonly created = new Set<string>()
  constructor(
    readonly baseUrl: string,
    readonly token = TOKEN,
  ) {}

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.token}`, ...extra }
  }

  fetch(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(this.baseUrl + path, {
      ...init,
      headers: { ...this.headers(), ...(init.headers as Record<string, string> | undefined) },
    })
  }

  async json<T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
    const res = await this.fetch(path, init)
    const text = await res.text()
    return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as T }
  }

  async session(): Promise<string> {
    const { status, body } = await this.json<{ id: string }>('/v1/sessions', {
      method: 'POST',
      body: '{}',
    })
    expect(status).toBe(201)
    this.created.add(body.id)
    return body.id
  }

  async call(id: string, tool: string, args: unknown): Promise<ToolResultJson> {
    const { status, body } = await this.json<ToolResultJson>(`/v1/sessions/${id}/tools/${tool}`, {
      method: 'POST',
      body: JSON.stringify({ args }),
    })
    expect(status).toBe(200)
    return body
  }

  async events(id: string, lastEventId?: string): Promise<SseReader> {
    const res = await this.fetch(`/v1/sessions/${id}/events`, {
      headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    return new SseReader(res)
  }

  async closeAll(): Promise<void> {
    await Promise.all(
      [...this.created].map((id) =>
        this.fetch(`/v1/sessions/${id}`, { method: 'DELETE' }).then((r) => r.body?.cancel()),
      ),
    )
    this.created.clear()
  }
}

const parse = (f: SseFrame) => JSON.parse(f.data) as Record<string, unknown>

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 20))
  }
}

function expectError(status: number, body: unknown, want: number, code?: string): void {
  expect(status).toBe(want)
  const error = (body as { error: { code: string; message: string } }).error
  expect(typeof error.message).toBe('string')
  expect(JSON.stringify(body)).not.toMatch(/\n\s+at /)
  if (code !== undefined) expect(error.code).toBe(code)
}

/** The route table of DESIGN.md "Serving: the HTTP API" (the MCP endpoint comes later). */
export const DESIGN_ROUTES: [string, string][] = [
  ['get', '/v1/health'],
  ['get', '/v1/openapi.json'],
  ['post', '/v1/sessions'],
  ['get', '/v1/sessions/{id}'],
  ['get', '/v1/sessions/{id}/tools'],
  ['post', '/v1/sessions/{id}/tools/{name}'],
  ['get', '/v1/sessions/{id}/events'],
  ['get', '/v1/sessions/{id}/confirmations'],
  ['post', '/v1/sessions/{id}/confirmations/{callId}'],
  ['get', '/v1/sessions/{id}/artifacts'],
  ['get', '/v1/sessions/{id}/snapshot'],
  ['delete', '/v1/sessions/{id}'],
  ['post', '/v1/sessions/{id}/messages'],
  ['get', '/v1/sessions/{id}/tasks'],
  ['get', '/v1/sessions/{id}/tasks/{taskId}'],
  ['delete', '/v1/sessions/{id}/tasks/{taskId}'],
]

/** Register the whole HTTP suite for servers made by `start`. */
export function httpCases(
  label: string,
  start: (config: CaseServerConfig) => Promise<CaseServer>,
  facts: CaseFacts,
): void {
  describe(`HTTP API (${label})`, () => {
    // With a model the sessions also offer generate_object and task (never parallel_task).
    const withModel = [...facts.tools, 'generate_object', 'task']
    let server: CaseServer
    let api: Api
    let fake: FakeProvider
    beforeAll(async () => {
      fake = await startFakeProvider()
      server = await start({
        token: TOKEN,
        permissions: ASK,
        model: { protocol: facts.modelProtocol ?? 'openai', baseURL: fake.baseURL },
      })
      api = new Api(server.baseUrl)
    })
    afterEach(async () => api.closeAll())
    afterAll(async () => {
      await server?.close()
      await fake?.close()
    })

    const message = (id: string, body: unknown) =>
      api.fetch(`/v1/sessions/${id}/messages`, {
        method: 'POST',
        body: typeof body === 'string' ? body : JSON.stringify(body),
      })

    it('runs an agent turn over POST /messages, streaming its events as SSE', async () => {
      const args = JSON.stringify({ file_path: 'notes/agent.txt', content: 'from the model\n' })
      fake.reset([
        { text: 'Writing.', toolCalls: [{ name: 'write', arguments: args }] },
        { text: 'Done.' },
      ])
      const id = await api.session()
      const res = await message(id, { prompt: 'write a note' })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
      const frames = await new SseReader(res).collect((f) => f.event === 'finish')
      const types = frames.map((f) => f.event)
      expect(types[0]).toBe('step_start')
      expect(types).toContain('text_delta')
      expect(types.filter((t) => t === 'step_end')).toHaveLength(2)
      expect(frames.map((f) => Number(f.id))).toEqual(frames.map((_, i) => i + 1))
      const call = parse(frames.find((f) => f.event === 'tool_call')!)
      expect(call).toMatchObject({ toolName: 'write', args: JSON.parse(args) })
      const result = parse(frames.find((f) => f.event === 'tool_result')!)
      expect(result).toMatchObject({ toolName: 'write', exitCode: 0 })
      expect(parse(frames.at(-1)!)).toMatchObject({ type: 'finish', text: 'Done.', steps: 2 })
      const read = await api.call(id, 'read', { file_path: 'notes/agent.txt' })
      expect(read.output).toContain('from the model')
      const snapshot = await api.json<{ conversation: { messages: { role: string }[] } }>(
        `/v1/sessions/${id}/snapshot`,
      )
      expect(snapshot.body.conversation.messages.map((m) => m.role)).toEqual([
        'user',
        'assistant',
        'tool',
        'assistant',
      ])
      // The model's request carried the session's tools and, next, the write's result.
      expect(fake.requests).toHaveLength(2)
      expect(JSON.stringify(fake.requests[1]!.body)).toContain('notes/agent.txt')
    })

    it('ends the stream with an error frame when the model fails', async () => {
      fake.reset([{ status: 400, message: 'bad request from the model' }])
      const id = await api.session()
      const res = await message(id, { prompt: 'fail please' })
      expect(res.status).toBe(200)
      const frames = await new SseReader(res).collect((f) => f.event === 'error')
      expect(parse(frames.at(-1)!)).toMatchObject({
        type: 'error',
        error: { code: 'invalid_argument' },
      })
    })

    it('cancels the turn when the client goes away', async () => {
      fake.reset([{ text: 'a very slow answer', chunks: ['a ', 'very ', 'slow'], delayMs: 1500 }])
      const id = await api.session()
      const controller = new AbortController()
      const res = await api.fetch(`/v1/sessions/${id}/messages`, {
        method: 'POST',
        body: JSON.stringify({ prompt: 'slow' }),
        signal: controller.signal,
      })
      expect(res.status).toBe(200)
      const busy = await message(id, { prompt: 'again' })
      expectError(busy.status, await busy.json(), 409, 'turn_in_progress')
      controller.abort()
      fake.reset([{ text: 'quick' }])
      const next = await until(async () => {
        const r = await message(id, { prompt: 'after' })
        if (r.status === 200) return r
        await r.body?.cancel()
        return undefined
      })
      const frames = await new SseReader(next).collect((f) => f.event === 'finish')
      expect(parse(frames.at(-1)!)).toMatchObject({ text: 'quick' })
    })

    it('runs a background task the model starts, readable and cancellable over HTTP', async () => {
      const args = JSON.stringify({
        tasks: [{ agent: 'explore', description: 'bg', prompt: 'look', background: true }],
      })
      fake.reset([
        { toolCalls: [{ name: 'task', arguments: args }] },
        { text: 'report' },
        { text: 'report' },
      ])
      const id = await api.session()
      const res = await message(id, { prompt: 'start it' })
      const frames = await new SseReader(res).collect((f) => f.event === 'finish')
      const started = parse(frames.find((f) => f.event === 'tool_result')!)
      const taskId = (started.metadata as { task_id: string }).task_id
      expect(taskId).toMatch(/^task_/)
      const done = await until(async () => {
        const { body } = await api.json<{ status: string; result?: { output: string } }>(
          `/v1/sessions/${id}/tasks/${taskId}`,
        )
        return body.status === 'running' ? undefined : body
      })
      expect(done).toMatchObject({ status: 'completed', agent: 'explore', description: 'bg' })
      expect(done.result!.output).toContain('report')
      const list = await api.json<{ id: string }[]>(`/v1/sessions/${id}/tasks`)
      expect(list.body.map((t) => t.id)).toEqual([taskId])
      const gone = await api.json(`/v1/sessions/${id}/tasks/task_nope`)
      expectError(gone.status, gone.body, 404, 'task_not_found')
      const cancel = await api.fetch(`/v1/sessions/${id}/tasks/${taskId}`, { method: 'DELETE' })
      expect(cancel.status).toBe(204)
    })

    it('refuses bad message bodies with typed 4xx errors', async () => {
      const id = await api.session()
      const bad: [unknown, number, string][] = [
        ['{not json', 400, 'invalid_json'],
        [{}, 400, 'invalid_argument'],
        [{ prompt: '' }, 400, 'invalid_argument'],
        [{ prompt: 42 }, 400, 'invalid_argument'],
        [{ prompt: 'x', extra: true }, 400, 'invalid_argument'],
        [{ prompt: 'x', max_steps: 0 }, 400, 'invalid_argument'],
        [{ prompt: 'x', max_steps: 'many' }, 400, 'invalid_argument'],
        [[1, 2], 400, 'invalid_argument'],
      ]
      for (const [body, status, code] of bad) {
        const res = await message(id, body)
        expectError(res.status, await res.json(), status, code)
      }
      const unknown = await message('no-such-session', { prompt: 'x' })
      expectError(unknown.status, await unknown.json(), 404, 'session_not_found')
    })

    it('answers health without a token, and names its version and runtime', async () => {
      const res = await fetch(server.baseUrl + '/v1/health')
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({
        ok: true,
        version: pkg.version,
        runtime: expect.any(String),
      })
      const landing = await fetch(server.baseUrl + '/')
      expect(landing.status).toBe(200)
      expect(await landing.text()).toContain('/v1/openapi.json')
    })

    it('refuses every other route without the right bearer token (401)', async () => {
      const id = await api.session()
      const routes: [string, string][] = [
        ['GET', '/v1/openapi.json'],
        ['POST', '/v1/sessions'],
        ['GET', `/v1/sessions/${id}`],
        ['GET', `/v1/sessions/${id}/tools`],
        ['POST', `/v1/sessions/${id}/tools/read`],
        ['GET', `/v1/sessions/${id}/events`],
        ['GET', `/v1/sessions/${id}/confirmations`],
        ['POST', `/v1/sessions/${id}/confirmations/x`],
        ['GET', `/v1/sessions/${id}/artifacts?uri=a3s://x`],
        ['GET', `/v1/sessions/${id}/snapshot`],
        ['GET', `/v1/sessions/${id}/skills`],
        ['DELETE', `/v1/sessions/${id}`],
        ['GET', '/v1/no-such-route'],
      ]
      const bad = [
        undefined,
        'Bearer wrong-token',
        `Bearer ${TOKEN}x`,
        `Bearer ${TOKEN.slice(0, -1)}`,
        `Basic ${TOKEN}`,
        'Bearer',
        TOKEN,
      ]
      for (const [method, path] of routes) {
        for (const authorization of bad) {
          const res = await fetch(server.baseUrl + path, {
            method,
            headers: authorization === undefined ? {} : { authorization },
            ...(method === 'POST' ? { body: '{}' } : {}),
          })
          const body: unknown = await res.json()
          expectError(res.status, body, 401, 'unauthorized')
          expect(res.headers.get('www-authenticate')).toBe('Bearer')
        }
      }
      // A GET may carry the token in the query (EventSource cannot send headers); a POST not.
      const viaQuery = await fetch(`${server.baseUrl}/v1/sessions/${id}?token=${TOKEN}`)
      expect(viaQuery.status).toBe(200)
      await viaQuery.body?.cancel()
      const postViaQuery = await fetch(`${server.baseUrl}/v1/sessions?token=${TOKEN}`, {
        method: 'POST',
      })
      expect(postViaQuery.status).toBe(401)
      await postViaQuery.body?.cancel()
      // The session survived all of it.
      expect((await api.json(`/v1/sessions/${id}`)).status).toBe(200)
    })

    it('opens a session, describes it and lists its tool definitions', async () => {
      const res = await api.fetch('/v1/sessions', { method: 'POST' })
      expect(res.status).toBe(201)
      const created = (await res.json()) as { id: string; tools: string[] }
      api.created.add(created.id)
      expect(created.tools).toEqual(withModel)
      expect(res.headers.get('location')).toBe(`/v1/sessions/${created.id}`)
      const info = await api.json<{ id: string; tools: string[]; activeTools: unknown[] }>(
        `/v1/sessions/${created.id}`,
      )
      expect(info).toEqual({
        status: 200,
        body: { id: created.id, tools: withModel, activeTools: [] },
      })
      const defs = await api.json<{ name: string; parameters: Record<string, unknown> }[]>(
        `/v1/sessions/${created.id}/tools`,
      )
      expect(defs.status).toBe(200)
      expect(defs.body.map((d) => d.name)).toEqual(withModel)
      for (const d of defs.body) expect(d.parameters.additionalProperties).toBe(false)
    })

    it('keeps a file written by one request for the next, and fails tools with typed results', async () => {
      const id = await api.session()
      const written = await api.call(id, 'write', {
        file_path: 'notes/a.txt',
        content: 'one\ntwo\n',
      })
      expect(written.exitCode).toBe(0)
      const read = await api.call(id, 'read', { file_path: 'notes/a.txt' })
      expect(read).toMatchObject({ name: 'read', exitCode: 0, output: '     1\tone\n     2\ttwo' })
      const edited = await api.call(id, 'edit', {
        file_path: 'notes/a.txt',
        old_string: 'two',
        new_string: 'three',
      })
      expect(edited.exitCode).toBe(0)
      expect((await api.call(id, 'read', { file_path: 'notes/a.txt' })).output).toContain('three')
      const ls = await api.call(id, 'ls', { path: 'notes' })
      expect(ls.output).toContain('a.txt')
      // Another session over the same server workspace sees the file too (or, with a
      // workspace per session, does not).
      const other = await api.session()
      expect((await api.call(other, 'read', { file_path: 'notes/a.txt' })).exitCode).toBe(
        facts.sharedWorkspace === false ? 1 : 0,
      )

      const missing = await api.call(id, 'read', { file_path: 'notes/none.txt' })
      expect(missing).toMatchObject({ exitCode: 1, errorKind: { type: 'not_found' } })
      const escape = await api.call(id, 'read', { file_path: '../../etc/passwd' })
      expect(escape.exitCode).toBe(1)
      const badArgs = await api.call(id, 'read', { file_path: 7 })
      expect(badArgs).toMatchObject({ exitCode: 1, errorKind: { type: 'invalid_argument' } })
      const unknown = await api.call(id, 'no_such_tool', {})
      expect(unknown.exitCode).toBe(1)
      expect(unknown.errorKind?.type).toBeDefined()
      const proto = await api.call(id, '__proto__', {})
      expect(proto.exitCode).toBe(1)
      // Empty body or no "args": the call gets {} (and read then asks for its argument).
      const empty = await api.json<ToolResultJson>(`/v1/sessions/${id}/tools/read`, {
        method: 'POST',
      })
      expect(empty.status).toBe(200)
      expect(empty.body.errorKind?.type).toBe('invalid_argument')
    })

    it('answers malformed bodies with 400 and typed errors', async () => {
      const id = await api.session()
      const cases: [string, string, string][] = [
        [`/v1/sessions/${id}/tools/read`, '{', 'invalid_json'],
        [`/v1/sessions/${id}/tools/read`, '{"args": {"file_path": "a"}', 'invalid_json'],
        [`/v1/sessions/${id}/tools/read`, '[1, 2]', 'invalid_argument'],
        [`/v1/sessions/${id}/tools/read`, '"args"', 'invalid_argument'],
        [`/v1/sessions/${id}/tools/read`, 'null', 'invalid_argument'],
        [`/v1/sessions/${id}/tools/read`, '{"args": [1]}', 'invalid_argument'],
        [`/v1/sessions/${id}/tools/read`, '{"args": "a.txt"}', 'invalid_argument'],
        [`/v1/sessions/${id}/tools/read`, '{"args": null}', 'invalid_argument'],
        [`/v1/sessions/${id}/tools/read`, '{"arg": {}}', 'invalid_argument'],
        ['/v1/sessions', '{"permissions": {}}', 'invalid_argument'],
        ['/v1/sessions', 'not json', 'invalid_json'],
        [`/v1/sessions/${id}/confirmations/x`, '{"approved": "yes"}', 'invalid_argument'],
        [`/v1/sessions/${id}/confirmations/x`, '{}', 'invalid_argument'],
      ]
      for (const [path, body, code] of cases) {
        const res = await api.json(path, { method: 'POST', body })
        expectError(res.status, res.body, 400, code)
      }
      const badId = await api.json(`/v1/sessions/${id}/events`, {
        headers: { 'last-event-id': 'abc' },
      })
      expectError(badId.status, badId.body, 400, 'invalid_argument')
      const noUri = await api.json(`/v1/sessions/${id}/artifacts`)
      expectError(noUri.status, noUri.body, 400, 'invalid_argument')
    })

    it('lists the skills a session found in its workspace (GET /skills), 404 for no session', async () => {
      // A skill the model may not invoke: listed, but it adds no tools to later sessions.
      const id = await api.session()
      const wrote = await api.call(id, 'write', {
        file_path: '.agents/skills/http-suite-only/SKILL.md',
        content:
          '---\nname: http-suite-only\ndescription: Listed over HTTP\ndisable-model-invocation: true\n---\nBody.\n',
      })
      expect(wrote.exitCode).toBe(0)
      // Skills are found when a session opens: the writer's own list is still empty.
      expect((await api.json(`/v1/sessions/${id}/skills`)).body).toEqual({
        skills: [],
        diagnostics: [],
      })
      const later = await api.session()
      const listed = await api.json<{ skills: { name: string }[] }>(`/v1/sessions/${later}/skills`)
      expect(listed.status).toBe(200)
      if (facts.sharedWorkspace === false) expect(listed.body.skills).toEqual([])
      else
        expect(listed.body.skills).toEqual([
          {
            name: 'http-suite-only',
            description: 'Listed over HTTP',
            kind: 'instruction',
            tags: [],
            allowed_tools: null,
            disable_model_invocation: true,
            source: { kind: 'workspace', path: '.agents/skills/http-suite-only/SKILL.md' },
          },
        ])
      const missing = await api.json('/v1/sessions/nope/skills')
      expectError(missing.status, missing.body, 404, 'session_not_found')
    })

    it('answers an unknown session with 404 session_not_found on every session route', async () => {
      const routes: [string, string][] = [
        ['GET', '/v1/sessions/nope'],
        ['GET', '/v1/sessions/nope/tools'],
        ['POST', '/v1/sessions/nope/tools/read'],
        ['GET', '/v1/sessions/nope/events'],
        ['GET', '/v1/sessions/nope/confirmations'],
        ['POST', '/v1/sessions/nope/confirmations/x'],
        ['GET', '/v1/sessions/nope/artifacts?uri=a3s://tool-output/read/00'],
        ['GET', '/v1/sessions/nope/snapshot'],
        ['DELETE', '/v1/sessions/nope'],
        ['GET', '/v1/sessions/__proto__'],
        ['GET', '/v1/sessions/constructor/tools'],
        ['GET', '/v1/sessions/..%2F..%2Fetc%2Fpasswd/tools'],
      ]
      for (const [method, path] of routes) {
        const res = await api.json(path, {
          method,
          ...(method === 'POST' ? { body: '{"args":{}}' } : {}),
        })
        expectError(res.status, res.body, 404, 'session_not_found')
      }
      const route = await api.json('/v1/nothing/here')
      expectError(route.status, route.body, 404, 'not_found')
      const method = await api.json('/v1/sessions', { method: 'PUT' })
      expectError(method.status, method.body, 405, 'method_not_allowed')
    })

    it('refuses a body over 8 MiB with 413, with or without a length', async () => {
      const id = await api.session()
      const big = JSON.stringify({ args: { file_path: 'big.txt', content: 'x'.repeat(8 * MiB) } })
      const sized = await api.json(`/v1/sessions/${id}/tools/write`, { method: 'POST', body: big })
      expectError(sized.status, sized.body, 413, 'payload_too_large')
      const bytes = new TextEncoder().encode(big)
      const chunked = await api.json(`/v1/sessions/${id}/tools/write`, {
        method: 'POST',
        body: new ReadableStream({
          start(controller) {
            for (let i = 0; i < bytes.length; i += MiB)
              controller.enqueue(bytes.subarray(i, i + MiB))
            controller.close()
          },
        }),
        duplex: 'half',
      } as RequestInit)
      expectError(chunked.status, chunked.body, 413, 'payload_too_large')
      // Just under the limit is fine, and nothing of the refused bodies was written.
      const ok = await api.call(id, 'write', { file_path: 'big.txt', content: 'x'.repeat(7 * MiB) })
      expect(ok.exitCode).toBe(0)
      expect((await api.call(id, 'read', { file_path: 'big.txt', limit: 1 })).exitCode).toBe(0)
    })

    it('closes a session on DELETE (204), then it is gone', async () => {
      const id = await api.session()
      const res = await api.fetch(`/v1/sessions/${id}`, { method: 'DELETE' })
      expect(res.status).toBe(204)
      expect(await res.text()).toBe('')
      api.created.delete(id)
      expectError(
        ...(Object.values(await api.json(`/v1/sessions/${id}`)) as [number, unknown]),
        404,
        'session_not_found',
      )
      const again = await api.json(`/v1/sessions/${id}`, { method: 'DELETE' })
      expectError(again.status, again.body, 404, 'session_not_found')
    })

    it('gives a snapshot and the artifact of a projected result', async () => {
      const id = await api.session()
      const snap = await api.json<{ schema: string; tools: string[]; permissions: unknown }>(
        `/v1/sessions/${id}/snapshot`,
      )
      expect(snap.status).toBe(200)
      expect(snap.body).toMatchObject({
        schema: 'isoagent.session-snapshot.v1',
        tools: withModel,
        permissions: ASK,
      })
      const lines = Array.from({ length: 2000 }, (_, i) => `line ${i + 1} ${'y'.repeat(70)}`)
      await api.call(id, 'write', { file_path: 'long.txt', content: lines.join('\n') + '\n' })
      const read = await api.call(id, 'read', { file_path: 'long.txt' })
      const evidence = read.metadata?.a3s_tool_result_evidence as { content_ref: string }
      expect(evidence.content_ref).toMatch(/^a3s:\/\/tool-output\/read\//)
      expect(read.output).not.toContain('line 2000 ')
      const res = await api.fetch(
        `/v1/sessions/${id}/artifacts?uri=${encodeURIComponent(evidence.content_ref)}`,
      )
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8')
      const full = await res.text()
      expect(full).toContain(`  2000\tline 2000 `)
      const none = await api.json(
        `/v1/sessions/${id}/artifacts?uri=${encodeURIComponent('a3s://tool-output/read/' + '0'.repeat(64))}`,
      )
      expectError(none.status, none.body, 404, 'artifact_not_found')
    })

    it('streams tool_start/tool_end of calls made by other requests, and replays after Last-Event-ID', async () => {
      const id = await api.session()
      const stream = await api.events(id)
      const result = await api.call(id, 'write', { file_path: 'ev/a.txt', content: 'a' })
      expect(result.exitCode).toBe(0)
      const frames = await stream.collect((f) => f.event === 'tool_end')
      const start = frames.find((f) => f.event === 'tool_start')!
      const end = frames.at(-1)!
      expect(parse(start)).toMatchObject({ type: 'tool_start', toolName: 'write', origin: 'agent' })
      expect(parse(end)).toMatchObject({ type: 'tool_end', toolName: 'write', exitCode: 0 })
      expect(parse(end).callId).toBe(parse(start).callId)
      const ids = frames.map((f) => Number(f.id))
      expect(ids.every((n, i) => Number.isInteger(n) && (i === 0 || n > ids[i - 1]!))).toBe(true)
      for (const f of frames) expect(parse(f).type).toBe(f.event)
      await stream.close()

      // A second call while nobody listens, then a reconnect from the tool_start of the first.
      await api.call(id, 'read', { file_path: 'ev/a.txt' })
      const again = await api.events(id, start.id)
      const replay = await again.collect(
        (f) => f.event === 'tool_end' && parse(f).toolName === 'read',
      )
      expect(Number(replay[0]!.id)).toBe(Number(start.id) + 1)
      expect(replay.map((f) => f.id)).toContain(end.id)
      expect(replay.filter((f) => f.event === 'tool_start').map((f) => parse(f).toolName)).toEqual([
        'read',
      ])
      // Live events keep coming on the replayed stream, and it ends when the session closes.
      await api.call(id, 'ls', { path: '.' })
      const live = await again.collect((f) => f.event === 'tool_end')
      expect(parse(live.at(-1)!).toolName).toBe('ls')
      await api.fetch(`/v1/sessions/${id}`, { method: 'DELETE' })
      api.created.delete(id)
      expect(await again.next()).toBeUndefined()
    })

    it('holds a call a rule asks about until it is approved over HTTP', async () => {
      const id = await api.session()
      const stream = await api.events(id)
      const call = api.call(id, 'write', { file_path: 'ask/yes.txt', content: 'approved' })
      const pending = await until(async () => {
        const list = (
          await api.json<{ id: string; callId: string; toolName: string }[]>(
            `/v1/sessions/${id}/confirmations`,
          )
        ).body
        return list.length > 0 ? list : undefined
      })
      expect(pending).toHaveLength(1)
      expect(pending[0]).toMatchObject({ toolName: 'write', args: { file_path: 'ask/yes.txt' } })
      const asked = await stream.collect((f) => f.event === 'confirmation_required')
      expect(parse(asked.at(-1)!)).toMatchObject({ callId: pending[0]!.callId })
      // While it waits, the session reports the call as active.
      const info = await api.json<{ activeTools: { id: string }[] }>(`/v1/sessions/${id}`)
      expect(info.body.activeTools.map((a) => a.id)).toContain(pending[0]!.callId)

      const answer = await api.fetch(`/v1/sessions/${id}/confirmations/${pending[0]!.callId}`, {
        method: 'POST',
        body: JSON.stringify({ approved: true }),
      })
      expect(answer.status).toBe(204)
      expect(await call).toMatchObject({ exitCode: 0 })
      expect((await api.call(id, 'read', { file_path: 'ask/yes.txt' })).output).toContain(
        'approved',
      )
      const twice = await api.json(`/v1/sessions/${id}/confirmations/${pending[0]!.id}`, {
        method: 'POST',
        body: '{"approved": false}',
      })
      expectError(twice.status, twice.body, 409, 'confirmation_answered')
      const unknown = await api.json(`/v1/sessions/${id}/confirmations/nope`, {
        method: 'POST',
        body: '{"approved": true}',
      })
      expectError(unknown.status, unknown.body, 404, 'confirmation_not_found')
      await stream.close()
    })

    it('fails a call a rule asks about when it is refused over HTTP', async () => {
      const id = await api.session()
      const call = api.call(id, 'write', { file_path: 'ask/no.txt', content: 'refused' })
      const pending = await until(async () => {
        const list = (await api.json<{ id: string }[]>(`/v1/sessions/${id}/confirmations`)).body
        return list[0]
      })
      const answer = await api.fetch(`/v1/sessions/${id}/confirmations/${pending.id}`, {
        method: 'POST',
        body: JSON.stringify({ approved: false }),
      })
      expect(answer.status).toBe(204)
      const result = await call
      expect(result.exitCode).toBe(1)
      expect(result.errorKind?.type).toBe('permission_denied')
      const read = await api.call(id, 'read', { file_path: 'ask/no.txt' })
      expect(read.errorKind?.type).toBe('not_found')
      expect((await api.json<unknown[]>(`/v1/sessions/${id}/confirmations`)).body).toEqual([])
    })

    it('documents every route and inlines every tool schema in OpenAPI 3.1', async () => {
      const id = await api.session()
      const defs = (
        await api.json<{ name: string; parameters: unknown }[]>(`/v1/sessions/${id}/tools`)
      ).body
      const { status, body: doc } = await api.json<{
        openapi: string
        paths: Record<string, Record<string, Record<string, unknown>>>
        components: { schemas: Record<string, unknown> }
      }>('/v1/openapi.json')
      expect(status).toBe(200)
      expect(doc.openapi).toBe('3.1.0')
      for (const [method, path] of DESIGN_ROUTES) {
        expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined()
      }
      expect(doc.paths['/v1/health']!.get!.security).toEqual([])
      expect(doc.paths['/v1/sessions']!.post!.security).toEqual([{ bearer: [] }])
      for (const def of defs) {
        const op = doc.paths[`/v1/sessions/{id}/tools/${def.name}`]?.post as {
          requestBody: { content: Record<string, { schema: { properties: { args: unknown } } }> }
        }
        expect(op, def.name).toBeDefined()
        expect(op.requestBody.content['application/json']!.schema.properties.args).toEqual(
          def.parameters,
        )
      }
      // Every $ref points at a component that exists.
      const refs = JSON.stringify(doc).match(/"#\/components\/schemas\/[A-Za-z]+"/g) ?? []
      for (const ref of refs) expect(doc.components.schemas[ref.slice(22, -1)], ref).toBeDefined()
    })

    it('gives 50 concurrent sessions each only their own events', async () => {
      const ids = await Promise.all(Array.from({ length: 50 }, () => api.session()))
      const streams = await Promise.all(ids.map((id) => api.events(id)))
      await Promise.all(
        ids.map((id, i) => api.call(id, 'write', { file_path: `many/${i}.txt`, content: `${i}` })),
      )
      const seen = await Promise.all(streams.map((s) => s.collect((f) => f.event === 'tool_end')))
      seen.forEach((frames, i) => {
        const starts = frames.filter((f) => f.event === 'tool_start').map(parse)
        expect(starts.map((s) => (s.args as { file_path: string }).file_path)).toEqual([
          `many/${i}.txt`,
        ])
        const callIds = new Set(
          frames.filter((f) => f.event !== 'events_dropped').map((f) => parse(f).callId),
        )
        expect(callIds.size).toBe(1)
      })
      await Promise.all(streams.map((s) => s.close()))
    })
  })

  describe(`MCP endpoint of the app (${label})`, () => {
    let server: CaseServer
    beforeAll(async () => {
      server = await start({ token: TOKEN, permissions: ASK })
    })
    afterAll(async () => server?.close())

    const connect = async (token = TOKEN) => {
      const client = new Client({ name: 'http-suite', version: '0.0.0' })
      await client.connect(
        new StreamableHTTPClientTransport(new URL(server.baseUrl + '/mcp'), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      )
      return client
    }

    it('lists the workspace tools and calls them on the governed path, behind the token', async () => {
      const client = await connect()
      try {
        const { tools } = await client.listTools()
        expect(tools.map((t) => t.name)).toEqual(facts.tools)
        const wrote = (await client.callTool({
          name: 'write',
          arguments: { file_path: 'mcp/a.txt', content: 'from mcp\n' },
        })) as CallToolResult
        expect(wrote.isError).toBe(false)
        const read = (await client.callTool({
          name: 'read',
          arguments: { file_path: 'mcp/a.txt' },
        })) as CallToolResult
        expect(read.content[0]).toMatchObject({
          type: 'text',
          text: expect.stringContaining('from mcp'),
        })
        const missing = (await client.callTool({
          name: 'read',
          arguments: { file_path: 'mcp/none.txt' },
        })) as CallToolResult
        expect(missing.isError).toBe(true)
        expect(missing.structuredContent).toMatchObject({ errorKind: { type: 'not_found' } })
        // An `ask` rule holds on this path too; a client without elicitation is refused.
        const asked = (await client.callTool({
          name: 'write',
          arguments: { file_path: 'ask/x.txt', content: 'x' },
        })) as CallToolResult
        expect(asked.isError).toBe(true)
      } finally {
        await client.close()
      }
      await expect(connect('wrong-token')).rejects.toThrow()
      const openapi = (await (
        await fetch(server.baseUrl + '/v1/openapi.json', {
          headers: { authorization: `Bearer ${TOKEN}` },
        })
      ).json()) as { paths: Record<string, Record<string, unknown>> }
      expect(Object.keys(openapi.paths['/mcp'] ?? {}).sort()).toEqual(['delete', 'get', 'post'])
    })
  })

  describe(`HTTP API limits (${label})`, () => {
    it('answers 400 model_not_configured for messages to a server without a model', async () => {
      const server = await start({ token: TOKEN, permissions: ASK })
      try {
        const api = new Api(server.baseUrl)
        const id = await api.session()
        const res = await api.fetch(`/v1/sessions/${id}/messages`, {
          method: 'POST',
          body: JSON.stringify({ prompt: 'hello' }),
        })
        expectError(res.status, await res.json(), 400, 'model_not_configured')
        await api.closeAll()
      } finally {
        await server.close()
      }
    })

    it('refuses a session past maxSessions with 429, and takes one again after a close', async () => {
      const server = await start({ token: TOKEN, permissions: ASK, maxSessions: 3 })
      const api = new Api(server.baseUrl)
      try {
        const ids = [await api.session(), await api.session(), await api.session()]
        const res = await api.json('/v1/sessions', { method: 'POST' })
        expectError(res.status, res.body, 429, 'too_many_sessions')
        await api.fetch(`/v1/sessions/${ids[0]}`, { method: 'DELETE' })
        await api.session()
      } finally {
        await api.closeAll()
        await server.close()
      }
    })

    it('closes a session nobody used for sessionIdleMs, but not one that is watched', async () => {
      const server = await start({ token: TOKEN, permissions: ASK, sessionIdleMs: 300 })
      const api = new Api(server.baseUrl)
      try {
        const idle = await api.session()
        const watched = await api.session()
        const headed = await api.session()
        const stream = await api.events(watched)
        // A HEAD of the event stream is answered with headers only and holds nothing open.
        const head = await api.fetch(`/v1/sessions/${headed}/events`, { method: 'HEAD' })
        expect(head.status).toBe(200)
        expect(head.headers.get('content-type')).toContain('text/event-stream')
        await new Promise((r) => setTimeout(r, 900))
        const gone = await api.json(`/v1/sessions/${idle}`)
        expectError(gone.status, gone.body, 404, 'session_not_found')
        const headGone = await api.json(`/v1/sessions/${headed}`)
        expectError(headGone.status, headGone.body, 404, 'session_not_found')
        expect((await api.json(`/v1/sessions/${watched}`)).status).toBe(200)
        await stream.close()
      } finally {
        await api.closeAll()
        await server.close()
      }
    })
  })
}
