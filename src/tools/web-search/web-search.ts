import { IsoagentError } from '../../errors.ts'
import type { HeadlessBrowser, BrowserLease } from '../../headless-browser.ts'
import { toolFailure, toolSuccess, type ToolResult } from '../../tool-result.ts'
import type { ToolSpec } from '../../kernel/tool-spec.ts'
import { Bulkhead } from './bulkhead.ts'
import { runCascade, type CascadeOutcome } from './cascade.ts'
import { CircuitBreaker, type BreakerOptions } from './circuit-breaker.ts'
import { Coalescer } from './coalescer.ts'
import { DEFAULT_ENGINES } from './default-engines.ts'
import type { EngineConfig } from './engine-config.ts'
import { envelopeOf, renderFailure, renderJson, renderText } from './render.ts'
import { RetryBudget } from './retry-budget.ts'
import type { EngineEnv } from './run-engine.ts'
import type { NetOptions } from '../../net/net-options.ts'
import { netSearchFetch, type SearchFetch } from './search-fetch.ts'

/** Bounds of `web_search`'s arguments. */
export const WEB_SEARCH_LIMITS = {
  defaultLimit: 10,
  maxLimit: 50,
  defaultTimeoutS: 30,
  maxTimeoutS: 60,
  maxQuery: 2048,
} as const

/** `SessionOptions.webSearch`: the engines, the browser tier and API keys. */
export interface WebSearchOptions {
  /** Engines to search instead of {@link DEFAULT_ENGINES}. */
  engines?: EngineConfig[]
  /** The browser tier (e.g. `playwrightBrowser()` from `isoagent/playwright`); none: no tier. */
  browser?: HeadlessBrowser
  /** API keys by engine name, filling `{key}` in the engine's URL or headers. */
  apiKeys?: Record<string, string>
  /** Circuit-breaker tuning (thresholds, open period, and its clock, for tests). */
  breaker?: BreakerOptions
}

/** What the `web_search` factory gets besides the options. */
export interface WebSearchDeps {
  net?: NetOptions
  /** The HTTP of the HTML/RSS/API tiers (default: the runtime's fetch behind the address policy). */
  fetch?: SearchFetch
}

interface WebSearchArgs {
  query: string
  engines?: string[]
  limit?: number
  timeout?: number
  format?: 'text' | 'json'
}

const pagesOf = new WeakMap<HeadlessBrowser, Bulkhead>()

function pagesFor(browser: HeadlessBrowser): Bulkhead {
  let b = pagesOf.get(browser)
  if (b === undefined) {
    b = new Bulkhead(Math.max(1, browser.maxPages))
    pagesOf.set(browser, b)
  }
  return b
}

const DESCRIPTION =
  'Search the web. Tiers run in order, each only while the merged results still miss the requirements ' +
  '(enough results with a title and URL from distinct domains, no engine error): a headless browser ' +
  '(where one is configured), then HTML pages and RSS feeds, then JSON APIs with keys. Results are merged ' +
  'and de-duplicated. Fails closed (exitCode 1, errorKind retrieval_requirements_not_met) rather than ' +
  'return too little; metadata.status is complete, partial or failed, metadata.tiers records each decision.'

/** A session's `web_search` tool: its breakers, coalescing and browser lease are its own. */
export function createWebSearchTool(
  options: WebSearchOptions = {},
  deps: WebSearchDeps = {},
): ToolSpec<WebSearchArgs> {
  const engines = options.engines ?? DEFAULT_ENGINES
  const byName = new Map(engines.map((e) => [e.name, e]))
  const breaker = new CircuitBreaker(options.breaker)
  const coalescer = new Coalescer<CascadeOutcome>()
  const retries = new RetryBudget()
  const browser = options.browser
  let lease: BrowserLease | undefined
  let closed = false
  const env: EngineEnv = {
    fetch: deps.fetch ?? netSearchFetch(deps.net),
    net: deps.net,
    browser,
    pages: browser === undefined ? undefined : pagesFor(browser),
    breaker,
    retries,
    apiKeys: options.apiKeys ?? {},
    now: () => Date.now(),
    lease: () => {
      if (lease === undefined && browser !== undefined && !closed) lease = browser.acquire()
    },
  }
  const source = options.engines === undefined ? 'builtin_default' : 'session'
  const names = engines.map((e) => e.name)

  return {
    name: 'web_search',
    pathArguments: [],
    description: DESCRIPTION,
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['query'],
      properties: {
        query: {
          type: 'string',
          minLength: 1,
          maxLength: WEB_SEARCH_LIMITS.maxQuery,
          description: 'What to search for.',
        },
        engines: {
          type: 'array',
          minItems: 1,
          maxItems: 32,
          uniqueItems: true,
          items: { type: 'string', minLength: 1, maxLength: 40 },
          description:
            'Only these engines (by name; default: every configured engine, tier by tier).',
        },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: WEB_SEARCH_LIMITS.maxLimit,
          description: `Results wanted (default ${WEB_SEARCH_LIMITS.defaultLimit}, max ${WEB_SEARCH_LIMITS.maxLimit}).`,
        },
        timeout: {
          type: 'number',
          exclusiveMinimum: 0,
          maximum: WEB_SEARCH_LIMITS.maxTimeoutS,
          description: `Deadline in seconds for the whole search (default ${WEB_SEARCH_LIMITS.defaultTimeoutS}, max ${WEB_SEARCH_LIMITS.maxTimeoutS}).`,
        },
        format: {
          type: 'string',
          enum: ['text', 'json'],
          description: 'Output format (default text).',
        },
      },
    },
    available: () => true,
    scheduling: {
      read_only: true,
      idempotent: true,
      resumable: true,
      cancellation_safe: true,
      supports_pagination: false,
      max_parallelism: 8,
      output_kind: 'text',
    },
    primaryArgument: 'query',
    ownDeadlineMs: (args) => (args.timeout ?? WEB_SEARCH_LIMITS.defaultTimeoutS) * 1000,
    async close() {
      closed = true
      const held = lease
      lease = undefined
      await held?.release()
    },
    async run(args, context): Promise<ToolResult> {
      const query = args.query.replace(/\s+/g, ' ').trim()
      if (query === '') throw new IsoagentError('invalid_argument', 'query is empty')
      const limit = args.limit ?? WEB_SEARCH_LIMITS.defaultLimit
      const timeoutMs = Math.round((args.timeout ?? WEB_SEARCH_LIMITS.defaultTimeoutS) * 1000)
      let selected = engines
      if (args.engines !== undefined) {
        const unknown = args.engines.filter((n) => !byName.has(n))
        if (unknown.length > 0)
          throw new IsoagentError(
            'invalid_argument',
            `unknown engine(s) ${unknown.join(', ')}; this session has: ${names.join(', ')}`,
          )
        selected = args.engines.map((n) => byName.get(n)!)
      }
      const started = Date.now()
      const key = JSON.stringify([
        query,
        limit,
        args.engines === undefined ? null : [...args.engines].sort(),
      ])
      let shared: Awaited<ReturnType<Coalescer<CascadeOutcome>['run']>>
      try {
        shared = await coalescer.run(key, context.signal, (signal) =>
          runCascade({ query, limit, engines: selected, timeoutMs, signal }, env),
        )
      } catch (error) {
        if (context.signal.aborted) throw new IsoagentError('cancelled', 'web_search cancelled')
        throw error
      }
      const outcome = shared.value
      const results = outcome.set.results.slice(0, limit)
      const failures = outcome.runs.flatMap((r) => (r.failure === undefined ? [] : [r.failure]))
      const retryAfters = failures.flatMap((f) =>
        f.retry_after_ms === undefined ? [] : [f.retry_after_ms],
      )
      const metadata: Record<string, unknown> = {
        status: outcome.status,
        query,
        limit,
        engine_selection_source: args.engines === undefined ? source : 'request',
        selected_engines: selected.map((e) => e.name),
        result_count: results.length,
        results,
        tiers: outcome.tiers,
        retrieval_health: outcome.health,
        retrieval_requirements: outcome.requirements,
        engine_failures: failures,
        circuit_breakers: Object.fromEntries(
          selected.map((e) => [e.name, breaker.snapshot(e.name)]),
        ),
        retry_context: {
          retry_budget_remaining: outcome.retryBudgetRemaining,
          retry_after_ms: retryAfters.length === 0 ? null : Math.min(...retryAfters),
          timed_out: outcome.timedOut,
        },
        search_coalescing: { role: shared.role, waiters: shared.waiters, ...coalescer.snapshot() },
        duration_ms: Date.now() - started,
      }
      if (context.signal.aborted) throw new IsoagentError('cancelled', 'web_search cancelled')
      if (outcome.status === 'failed') {
        const envelope = envelopeOf(outcome)
        const output =
          args.format === 'json'
            ? JSON.stringify({ error: envelope }, null, 2)
            : renderFailure(envelope)
        return toolFailure('web_search', output, envelope, metadata)
      }
      const output =
        args.format === 'json' ? renderJson(results) : renderText(query, outcome, results)
      return toolSuccess('web_search', output, metadata)
    },
  }
}

/** The default `web_search` (default engines, no browser): a session builds its own. */
export const webSearchTool = createWebSearchTool()
