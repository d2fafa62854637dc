import type { ExtractedResult, HeadlessBrowser } from '../../headless-browser.ts'
import type { Bulkhead } from './bulkhead.ts'
import type { CircuitBreaker } from './circuit-breaker.ts'
import { DEFAULT_WALL_SELECTOR } from './default-engines.ts'
import {
  engineHeaders,
  engineUrl,
  needsKey,
  tierOf,
  type EngineConfig,
  type EngineTier,
} from './engine-config.ts'
import { kindOfStatus, parseRetryAfter, type EngineFailure } from './engine-failure.ts'
import { extractJson } from './extract-json.ts'
import type { RetryBudget } from './retry-budget.ts'
import type { NetOptions } from '../../net/net-options.ts'
import { isRefusal, refuseLiteral, type SearchFetch } from './search-fetch.ts'
import { detectWall } from './wall-detection.ts'

/** Largest answer body read from an engine. */
export const MAX_ENGINE_BODY = 2 * 1024 * 1024

/** What a session's engines run with. */
export interface EngineEnv {
  fetch: SearchFetch
  net: NetOptions | undefined
  browser: HeadlessBrowser | undefined
  pages: Bulkhead | undefined
  breaker: CircuitBreaker
  retries: RetryBudget
  apiKeys: Record<string, string>
  now: () => number
  /** Take the session's browser lease (once). */
  lease(): void
}

/** One engine's part in a search (the tier record's entries). */
export interface EngineRun {
  engine: string
  kind: EngineConfig['kind']
  tier: EngineTier
  outcome: 'ok' | 'failed' | 'skipped'
  results: ExtractedResult[]
  base_url: string
  failure?: EngineFailure
  duration_ms: number
  attempts: number
  breaker: ReturnType<CircuitBreaker['snapshot']>['state']
  probe?: boolean
  page_wait_ms?: number
  address_check?: 'literal_only' | 'resolved'
}

/** Abort signals of one engine's run: the caller's and the tier's deadline. */
export interface RunSignals {
  caller: AbortSignal
  deadline: AbortSignal
  combined: AbortSignal
  deadlineMs: number
}

class EngineError extends Error {
  constructor(readonly failure: Omit<EngineFailure, 'engine'>) {
    super(failure.message)
  }
}

async function readCapped(response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0')
  if (declared > MAX_ENGINE_BODY) {
    await response.body?.cancel()
    throw new EngineError({ kind: 'garbage', message: `answer of ${declared} bytes is too large` })
  }
  if (response.body === null) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_ENGINE_BODY) {
      await reader.cancel()
      throw new EngineError({ kind: 'garbage', message: `answer over ${MAX_ENGINE_BODY} bytes` })
    }
    chunks.push(value)
  }
  const all = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    all.set(c, at)
    at += c.byteLength
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(all)
}

function baseUrl(engine: EngineConfig): string {
  const u = new URL(engine.url.replaceAll(/\{(query|limit|key)\}/g, 'x'))
  return `${u.origin}${u.pathname}`
}

async function runHttp(
  engine: EngineConfig,
  url: string,
  key: string | undefined,
  env: EngineEnv,
  signal: AbortSignal,
  run: EngineRun,
): Promise<ExtractedResult[]> {
  const accept =
    engine.kind === 'json'
      ? 'application/json'
      : engine.kind === 'rss'
        ? 'application/rss+xml, application/atom+xml, application/xml;q=0.9, */*;q=0.5'
        : 'text/html, application/xhtml+xml;q=0.9, */*;q=0.5'
  const headers: Record<string, string> = { accept, ...engineHeaders(engine, key) }
  const { response, finalUrl, addressCheck } = await env.fetch(url, { headers, signal })
  run.address_check = addressCheck
  if (response.status < 200 || response.status >= 300) {
    await response.body?.cancel()
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'), env.now())
    throw new EngineError({
      kind: kindOfStatus(response.status),
      message: `answered HTTP ${response.status}`,
      status: response.status,
      ...(retryAfter !== undefined ? { retry_after_ms: retryAfter } : {}),
    })
  }
  const body = await readCapped(response)
  if (engine.kind === 'json') {
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      throw new EngineError({ kind: 'garbage', message: 'answer is not JSON' })
    }
    const results = extractJson(parsed, engine.fields!)
    if (results === undefined)
      throw new EngineError({ kind: 'garbage', message: `no array at ${engine.fields!.results}` })
    return results
  }
  // The HTML parser behind the feed and page extractors loads at the first answer to parse.
  if (engine.kind === 'rss') {
    const { extractFeed, looksLikeFeed } = await import('./extract-feed.ts')
    if (!looksLikeFeed(body)) {
      const wall = detectWall(body.slice(0, 20_000))
      if (wall !== undefined) throw new EngineError({ kind: 'blocked', message: `a ${wall} wall` })
      throw new EngineError({ kind: 'garbage', message: 'answer is not an RSS or Atom feed' })
    }
    return extractFeed(body)
  }
  const type = (response.headers.get('content-type') ?? '').toLowerCase()
  if (type !== '' && !/html|xml|text\/plain/.test(type))
    throw new EngineError({ kind: 'garbage', message: `answer is ${type.split(';')[0]}, not HTML` })
  const selectors = { wall: DEFAULT_WALL_SELECTOR, ...engine.selectors! }
  const page = (await import('./extract-html.ts')).extractHtml(body, selectors)
  if (page.results.length === 0) {
    const wall = page.wall ? 'captcha' : detectWall(page.textSample)
    if (wall !== undefined) throw new EngineError({ kind: 'blocked', message: `a ${wall} wall` })
  }
  return page.results.map((r) => ({ ...r, url: new URL(r.url || '#', finalUrl).href }))
}

async function runBrowser(
  engine: EngineConfig,
  url: string,
  env: EngineEnv,
  signals: RunSignals,
  run: EngineRun,
): Promise<ExtractedResult[]> {
  const browser = env.browser!
  env.lease()
  for (;;) {
    run.attempts++
    const waitStart = env.now()
    const release = await env.pages!.acquire(signals.combined)
    run.page_wait_ms = (run.page_wait_ms ?? 0) + (env.now() - waitStart)
    let page: Awaited<ReturnType<HeadlessBrowser['search']>>
    try {
      page = await browser.search({
        url,
        allowedOrigin: new URL(url).origin,
        selectors: { wall: DEFAULT_WALL_SELECTOR, ...engine.selectors! },
        timeoutMs: Math.max(1, signals.deadlineMs - env.now()),
        signal: signals.combined,
      })
    } finally {
      release()
    }
    if (page.ok) {
      const retryAfter = parseRetryAfter(page.retryAfter, env.now())
      if (page.status >= 400 && page.results.length === 0) {
        throw new EngineError({
          kind: kindOfStatus(page.status),
          message: `answered HTTP ${page.status}`,
          status: page.status,
          ...(retryAfter !== undefined ? { retry_after_ms: retryAfter } : {}),
        })
      }
      if (page.results.length === 0) {
        const wall = page.wall ? 'captcha' : detectWall(page.textSample)
        if (wall !== undefined)
          throw new EngineError({ kind: 'blocked', message: `a ${wall} wall` })
      }
      env.retries.onSuccess()
      return page.results.map((r) => ({
        ...r,
        url: r.url === '' ? '' : new URL(r.url, page.finalUrl).href,
      }))
    }
    if (page.kind === 'cancelled' || signals.combined.aborted) throw signals.combined.reason
    if (page.kind === 'timeout') throw new EngineError({ kind: 'timeout', message: page.message })
    const transient =
      page.kind === 'crashed' || page.kind === 'navigation' || page.kind === 'launch'
    if (transient && env.now() < signals.deadlineMs && env.retries.tryRetry()) continue
    throw new EngineError({ kind: 'transport', message: `browser ${page.kind}: ${page.message}` })
  }
}

/**
 * Run one engine for `query`: its breaker admits it or not, its key and the browser are there
 * or it is skipped, its answer is fetched or rendered and extracted. Never throws.
 */
export async function runEngine(
  engine: EngineConfig,
  query: string,
  limit: number,
  env: EngineEnv,
  signals: RunSignals,
): Promise<EngineRun> {
  const started = env.now()
  const run: EngineRun = {
    engine: engine.name,
    kind: engine.kind,
    tier: tierOf(engine.kind),
    outcome: 'skipped',
    results: [],
    base_url: baseUrl(engine),
    duration_ms: 0,
    attempts: 0,
    breaker: env.breaker.state(engine.name),
  }
  const finish = (
    failure?: Omit<EngineFailure, 'engine'>,
    outcome?: EngineRun['outcome'],
  ): EngineRun => {
    run.duration_ms = env.now() - started
    if (failure !== undefined) {
      run.failure = { engine: engine.name, ...failure }
      run.outcome = outcome ?? 'failed'
    } else run.outcome = 'ok'
    run.breaker = env.breaker.state(engine.name)
    return run
  }
  const key = env.apiKeys[engine.name]
  if (needsKey(engine) && (key === undefined || key === ''))
    return finish({ kind: 'missing_key', message: `no apiKeys.${engine.name}` }, 'skipped')
  if (engine.kind === 'browser' && env.browser === undefined)
    return finish({ kind: 'no_browser', message: 'no HeadlessBrowser configured' }, 'skipped')
  const url = engineUrl(engine, query, limit, key)
  const refusal = refuseLiteral(new URL(url), env.net)
  if (refusal !== undefined) return finish({ kind: 'refused', message: refusal }, 'skipped')
  const admission = env.breaker.admit(engine.name)
  if (!admission.allowed) {
    return finish(
      {
        kind: 'circuit_open',
        message: `circuit open for ${Math.ceil(admission.retryInMs / 1000)} s more`,
        retry_after_ms: admission.retryInMs,
      },
      'skipped',
    )
  }
  if (admission.probe) run.probe = true
  try {
    const results =
      engine.kind === 'browser'
        ? await runBrowser(engine, url, env, signals, run)
        : (run.attempts++, await runHttp(engine, url, key, env, signals.combined, run))
    run.results = results
    if (results.length === 0) {
      env.breaker.record(engine.name, 'empty')
      return finish({ kind: 'empty', message: 'no results' })
    }
    env.breaker.record(engine.name, 'success')
    return finish()
  } catch (error) {
    let failure: Omit<EngineFailure, 'engine'>
    if (signals.caller.aborted) failure = { kind: 'cancelled', message: 'cancelled' }
    else if (signals.deadline.aborted)
      failure = { kind: 'timeout', message: 'no answer before the deadline' }
    else if (error instanceof EngineError) failure = error.failure
    else if (isRefusal(error)) failure = { kind: 'refused', message: error.message }
    else
      failure = {
        kind: 'transport',
        message: error instanceof Error ? error.message : String(error),
      }
    env.breaker.record(engine.name, failure.kind, failure.retry_after_ms)
    return finish(failure, failure.kind === 'refused' ? 'skipped' : 'failed')
  }
}
