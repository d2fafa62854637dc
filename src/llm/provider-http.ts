import { delay as wait } from '../event-loop.ts'
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import { IsoagentError } from '../errors.ts'

/** Connection options every provider takes. */
export interface ProviderHttpOptions {
  /** Root of the API, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`. */
  baseURL: string
  /** Sent as the provider's credential header when given. */
  apiKey?: string
  /** Extra request headers (they win over the defaults). */
  headers?: Record<string, string>
  /** The fetch to use (default `globalThis.fetch`). */
  fetch?: typeof fetch
  /** Retries after a 429, a 5xx or a connection failure (default 2; 0 disables). */
  maxRetries?: number
  /** First backoff delay in ms, doubled per retry, when the server names none (default 500). */
  retryDelayMs?: number
  /**
   * Longest wait (ms) before a retry (default 30000). A `Retry-After` beyond it is not waited
   * for: the call fails at once with `rate_limited` and the server's `retry_after_ms`.
   */
  maxRetryDelayMs?: number
  /** Deadline (ms) of one request, response and stream included (default 600000). */
  timeoutMs?: number
}

/** Defaults of {@link ProviderHttpOptions}. */
export const PROVIDER_DEFAULTS = {
  maxRetries: 2,
  retryDelayMs: 500,
  maxRetryDelayMs: 30_000,
  timeoutMs: 600_000,
} as const

const MAX_ERROR_BODY_CHARS = 4096

/** `retry-after-ms` (ms) or `Retry-After` (seconds or an HTTP date) in ms; null when absent. */
export function parseRetryAfter(headers: Headers, now = Date.now()): number | null {
  const ms = headers.get('retry-after-ms')
  if (ms !== null && ms.trim() !== '') {
    const value = Number(ms)
    if (Number.isFinite(value) && value >= 0) return Math.ceil(value)
  }
  const after = headers.get('retry-after')
  if (after === null || after.trim() === '') return null
  const seconds = Number(after)
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000)
  const date = Date.parse(after)
  return Number.isNaN(date) ? null : Math.max(0, date - now)
}

/** Validates the options every provider shares (throws `invalid_argument`). */
export function checkProviderOptions(options: ProviderHttpOptions & { model: string }): void {
  if (typeof options !== 'object' || options === null)
    throw new IsoagentError('invalid_argument', 'provider options must be an object')
  let url: URL
  try {
    url = new URL(options.baseURL)
  } catch {
    throw new IsoagentError('invalid_argument', 'baseURL must be an absolute http(s) URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new IsoagentError('invalid_argument', 'baseURL must be an absolute http(s) URL')
  if (typeof options.model !== 'string' || options.model.trim() === '')
    throw new IsoagentError('invalid_argument', 'model must be a non-empty string')
  for (const key of ['maxRetries', 'retryDelayMs', 'maxRetryDelayMs'] as const) {
    const v = options[key]
    if (v !== undefined && (!Number.isInteger(v) || v < 0))
      throw new IsoagentError('invalid_argument', `${key} must be a non-negative integer`)
  }
  const t = options.timeoutMs
  if (t !== undefined && (!Number.isInteger(t) || t < 1))
    throw new IsoagentError('invalid_argument', 'timeoutMs must be a positive integer')
}

/** `baseURL` joined with `path` (one slash between). */
export function endpoint(baseURL: string, path: string): string {
  return `${baseURL.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`
}

/** The message a provider put in its JSON error body (OpenAI and Anthropic shapes). */
export function providerMessage(body: string): string {
  try {
    const json = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown }
    if (typeof json.error === 'string') return json.error
    if (typeof json.error?.message === 'string') return json.error.message
    if (typeof json.message === 'string') return json.message
  } catch {
    // not JSON: the text itself
  }
  return body.trim().slice(0, MAX_ERROR_BODY_CHARS) || 'no message'
}

/** The typed failure for an HTTP status the provider answered with. */
export function statusError(
  op: string,
  status: number,
  message: string,
  retryAfterMs: number | null,
): IsoagentError {
  const data = { op, status }
  if (status === 429)
    return new IsoagentError('rate_limited', `${op}: rate limited (429): ${message}`, {
      data: { ...data, retry_after_ms: retryAfterMs },
    })
  if (status >= 500 || status === 408)
    return new IsoagentError('transport', `${op}: the provider failed (${status}): ${message}`, {
      data,
    })
  return new IsoagentError(
    'invalid_argument',
    `${op}: the provider refused the request (${status}): ${message}`,
    {
      data,
    },
  )
}

/**
 * One request's abort plumbing: the caller's signal and the request deadline abort one
 * controller; {@link RequestScope.failure} says which as a typed error.
 */
export class RequestScope {
  readonly controller = new AbortController()
  private readonly timer: ReturnType<typeof setTimeout>
  private timedOut = false
  private readonly onAbort: () => void

  constructor(
    readonly op: string,
    private readonly timeoutMs: number,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true
      this.controller.abort()
    }, timeoutMs)
    this.onAbort = () => this.controller.abort()
    if (callerSignal?.aborted) this.controller.abort()
    else callerSignal?.addEventListener('abort', this.onAbort, { once: true })
  }

  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** The typed error for an abort: `timeout` (ours or a TimeoutError reason) or `cancelled`. */
  abortError(): IsoagentError {
    const reason: unknown = this.callerSignal?.reason
    const callerTimeout =
      this.callerSignal?.aborted === true &&
      typeof reason === 'object' &&
      reason !== null &&
      (reason as { name?: unknown }).name === 'TimeoutError'
    if (this.timedOut || callerTimeout) {
      return new IsoagentError('timeout', `${this.op}: no complete answer within the deadline`, {
        data: { op: this.op, duration_ms: this.timedOut ? this.timeoutMs : 0 },
      })
    }
    return new IsoagentError('cancelled', `${this.op}: cancelled`, { data: { op: this.op } })
  }

  /** `error` as a typed failure: aborts win, IsoagentErrors pass, the rest is `transport`. */
  failure(error: unknown, what: string): IsoagentError {
    if (this.signal.aborted) return this.abortError()
    if (IsoagentError.is(error)) return error
    const message = error instanceof Error ? error.message : String(error)
    return new IsoagentError('transport', `${this.op}: ${what}: ${message}`, {
      data: { op: this.op },
      cause: error,
    })
  }

  dispose(): void {
    clearTimeout(this.timer)
    this.callerSignal?.removeEventListener('abort', this.onAbort)
  }
}

/**
 * POST `body` as JSON, retrying 429, 5xx and connection failures with backoff (the server's
 * `Retry-After` when given, capped). Resolves with an OK response; throws a typed error.
 */
export async function postJson(
  options: ProviderHttpOptions,
  scope: RequestScope,
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<Response> {
  const doFetch = options.fetch ?? globalThis.fetch
  const maxRetries = options.maxRetries ?? PROVIDER_DEFAULTS.maxRetries
  const baseDelay = options.retryDelayMs ?? PROVIDER_DEFAULTS.retryDelayMs
  const maxDelay = options.maxRetryDelayMs ?? PROVIDER_DEFAULTS.maxRetryDelayMs
  const payload = JSON.stringify(body)
  for (let attempt = 0; ; attempt++) {
    let error: IsoagentError
    let retryAfter: number | null = null
    try {
      const response = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers, ...options.headers },
        body: payload,
        signal: scope.signal,
      })
      if (response.ok) return response
      retryAfter = parseRetryAfter(response.headers)
      const text = await response.text().catch(() => '')
      error = statusError(scope.op, response.status, providerMessage(text), retryAfter)
    } catch (thrown) {
      error = scope.failure(thrown, 'the request failed')
    }
    const retryable = error.code === 'rate_limited' || error.code === 'transport'
    if (!retryable || attempt >= maxRetries) throw error
    const delay = retryAfter ?? Math.min(maxDelay, baseDelay * 2 ** attempt)
    if (delay > maxDelay) throw error
    if (!(await wait(delay, scope.signal))) throw scope.abortError()
  }
}

/** The JSON body of an OK response (a body that is not JSON is a `transport` failure). */
export async function readJson(response: Response, scope: RequestScope): Promise<unknown> {
  let text: string
  try {
    text = await response.text()
  } catch (error) {
    throw scope.failure(error, 'reading the response failed')
  }
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw new IsoagentError('transport', `${scope.op}: the response is not JSON`, {
      data: { op: scope.op },
    })
  }
}

/** The server-sent events of a streamed response, parsed as they arrive. */
export async function* sseEvents(
  response: Response,
  scope: RequestScope,
): AsyncGenerator<EventSourceMessage> {
  if (response.body === null) return
  const queue: EventSourceMessage[] = []
  const parser = createParser({ onEvent: (event) => queue.push(event) })
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<string>
      try {
        chunk = await reader.read()
      } catch (error) {
        throw scope.failure(error, 'the stream broke off')
      }
      if (chunk.done) break
      parser.feed(chunk.value)
      while (queue.length > 0) yield queue.shift()!
    }
    if (scope.signal.aborted) throw scope.abortError()
  } finally {
    reader.cancel().catch(() => undefined)
  }
}

/** Parse one SSE `data` field as JSON (a malformed chunk is a `transport` failure). */
export function parseChunk(scope: RequestScope, data: string): Record<string, unknown> {
  try {
    const value = JSON.parse(data) as unknown
    if (typeof value === 'object' && value !== null) return value as Record<string, unknown>
  } catch {
    // falls through
  }
  throw new IsoagentError('transport', `${scope.op}: a stream chunk is not a JSON object`, {
    data: { op: scope.op },
  })
}

/** The failure for a stream that ended before the provider said it was complete. */
export function cutStream(scope: RequestScope): IsoagentError {
  if (scope.signal.aborted) return scope.abortError()
  return new IsoagentError(
    'transport',
    `${scope.op}: the stream ended before the answer was complete`,
    {
      data: { op: scope.op },
    },
  )
}
