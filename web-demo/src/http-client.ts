import { EventSourceParserStream } from 'eventsource-parser/stream'
import type {
  AgentEvent,
  SessionEvent,
  ToolDefinition,
  ToolResult,
} from '../../adapters/browser/index.ts'
import { ChatError } from './chat-error.ts'
import { clientFailure, type PendingConfirmation, type ToolClient } from './tool-client.ts'

const EVENT_TYPES: SessionEvent['type'][] = [
  'tool_state',
  'tool_start',
  'tool_output_delta',
  'tool_end',
  'confirmation_required',
  'permission_denied',
  'hook_denied',
  'hook_error',
  'budget_exhausted',
  'events_dropped',
  'skill_loaded',
  'skill_started',
  'skill_finished',
  'workflow_step_started',
  'workflow_step_completed',
  'workflow_step_failed',
]

interface ApiErrorBody {
  error?: { code?: string; message?: string }
}

/**
 * The server client: one session of the HTTP API of `base` (the origin that served the page),
 * with the token `isoagent serve` printed in the URL. Events come over `EventSource` with
 * `?token=` (it cannot send headers). A session the server closed (idle) is reopened.
 */
export class HttpClient implements ToolClient {
  readonly mode = 'server' as const
  readonly description: string
  private readonly listeners = new Set<(event: SessionEvent) => void>()
  private source: EventSource | undefined
  private sessionId: string | undefined
  private closed = false

  private constructor(
    private readonly base: string,
    private readonly token: string,
  ) {
    this.description = `server ${new URL(base).host}`
  }

  /** Open a session; rejects with the server's message when that fails. */
  static async open(base: string, token: string): Promise<HttpClient> {
    const client = new HttpClient(base, token)
    await client.newSession()
    return client
  }

  private url(path: string): string {
    return new URL(path, this.base).toString()
  }

  private async request(
    method: string,
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<Response> {
    return fetch(this.url(path), {
      method,
      ...(signal ? { signal } : {}),
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
  }

  private async newSession(): Promise<string> {
    const response = await this.request('POST', 'v1/sessions', {})
    if (!response.ok) throw new Error(await describe(response))
    const { id } = (await response.json()) as { id: string }
    this.sessionId = id
    await this.listen(id)
    return id
  }

  /** Subscribe to the session's events; resolves once the stream is open (or after 5 s). */
  private listen(id: string): Promise<void> {
    this.source?.close()
    const source = new EventSource(
      this.url(
        `v1/sessions/${encodeURIComponent(id)}/events?token=${encodeURIComponent(this.token)}`,
      ),
    )
    for (const type of EVENT_TYPES) {
      source.addEventListener(type, (message) => {
        const event = JSON.parse((message as MessageEvent<string>).data) as SessionEvent
        for (const listener of this.listeners) listener(event)
      })
    }
    this.source = source
    return new Promise((done) => {
      const timer = setTimeout(done, 5000)
      source.addEventListener('open', () => (clearTimeout(timer), done()), { once: true })
    })
  }

  /**
   * A session route (`rest` after `/v1/sessions/:id`), reopening the session once when the
   * server no longer holds it. Public for the panels that read session state (skills, MCP, …).
   */
  async sessionRequest(
    method: string,
    rest: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<Response> {
    const id = this.sessionId ?? (await this.newSession())
    const response = await this.request(
      method,
      `v1/sessions/${encodeURIComponent(id)}${rest}`,
      body,
      signal,
    )
    if (response.status !== 404 || this.closed) return response
    const copy = response.clone()
    const code = ((await copy.json().catch(() => ({}))) as ApiErrorBody).error?.code
    if (code !== 'session_not_found') return response
    const fresh = await this.newSession()
    return this.request(method, `v1/sessions/${encodeURIComponent(fresh)}${rest}`, body, signal)
  }

  /**
   * One agent turn of the server's session: `POST …/messages`, its SSE answer read over fetch
   * (a POST with a body, which `EventSource` cannot send). A refusal (400 `model_not_configured`,
   * 409 `turn_in_progress`, …) or a final `error` frame throws a {@link ChatError} with its code;
   * aborting `signal` closes the connection, which cancels the turn on the server.
   */
  async *stream(prompt: string, signal: AbortSignal): AsyncGenerator<AgentEvent> {
    let response: Response
    try {
      response = await this.sessionRequest('POST', '/messages', { prompt }, signal)
    } catch (error) {
      if (signal.aborted) throw new ChatError('cancelled', 'the turn was stopped')
      throw new ChatError(
        'transport',
        `the server could not be reached: ${(error as Error).message}`,
      )
    }
    if (!response.ok || !response.body) {
      const body = (await response.json().catch(() => ({}))) as ApiErrorBody
      throw new ChatError(
        body.error?.code ?? `http_${response.status}`,
        body.error?.message ?? response.statusText,
      )
    }
    const reader = response.body
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream())
      .getReader()
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        const data = JSON.parse(value.data) as AgentEvent | ApiErrorBody
        if (value.event === 'error') {
          const error = (data as ApiErrorBody).error
          throw new ChatError(error?.code ?? 'error', error?.message ?? 'the turn failed')
        }
        yield data as AgentEvent
      }
    } catch (error) {
      if (error instanceof ChatError) throw error
      if (signal.aborted) throw new ChatError('cancelled', 'the turn was stopped')
      throw new ChatError('transport', `the stream broke: ${(error as Error).message}`)
    } finally {
      await reader.cancel().catch(() => undefined)
    }
  }

  async tools(): Promise<ToolDefinition[]> {
    const response = await this.sessionRequest('GET', '/tools')
    if (!response.ok) throw new Error(await describe(response))
    return (await response.json()) as ToolDefinition[]
  }

  async call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    try {
      const response = await this.sessionRequest('POST', `/tools/${encodeURIComponent(name)}`, {
        args,
      })
      if (!response.ok) return clientFailure(name, await describe(response))
      return (await response.json()) as ToolResult
    } catch (error) {
      return clientFailure(name, `the server could not be reached: ${(error as Error).message}`)
    }
  }

  onEvent(listener: (event: SessionEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  async pendingConfirmations(): Promise<PendingConfirmation[]> {
    const response = await this.sessionRequest('GET', '/confirmations')
    if (!response.ok) return []
    return (await response.json()) as PendingConfirmation[]
  }

  async confirm(key: string, approved: boolean): Promise<void> {
    const response = await this.sessionRequest(
      'POST',
      `/confirmations/${encodeURIComponent(key)}`,
      { approved },
    )
    if (!response.ok) throw new Error(await describe(response))
  }

  async close(): Promise<void> {
    this.closed = true
    this.source?.close()
    if (this.sessionId !== undefined)
      await this.request('DELETE', `v1/sessions/${encodeURIComponent(this.sessionId)}`).catch(
        () => undefined,
      )
  }
}

async function describe(response: Response): Promise<string> {
  const body = (await response.json().catch(() => ({}))) as ApiErrorBody
  return `HTTP ${response.status} ${body.error?.code ?? ''}: ${body.error?.message ?? response.statusText}`.trim()
}
