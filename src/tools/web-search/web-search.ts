import { IsoagentError } from '../../errors.ts'
import type { HeadlessBrowser, BrowserLease } from '../../headless-browser.ts'
import type { ToolResult } from '../../tool-result.ts'
import type { ToolContext, ToolSpec } from '../../kernel/tool-spec.ts'
import { Bulkhead } from './bulkhead.ts'
import { runCascade, type CascadeOutcome } from './cascade.ts'
import { CircuitBreaker, type BreakerOptions } from './circuit-breaker.ts'
import { Coalescer } from './coalescer.ts'
import { DEFAULT_ENGINES } from './default-engines.ts'
import type { EngineConfig } from './engine-config.ts'
import { RetryBudget } from './retry-budget.ts'
import type { EngineEnv } from './run-engine.ts'
import type { NetOptions } from '../../net/net-options.ts'
import { searchAnswer } from './search-answer.ts'
import { netSearchFetch, type SearchFetch } from './search-fetch.ts'
import {
  WEB_SEARCH_DESCRIPTION,
  WEB_SEARCH_LIMITS,
  WEB_SEARCH_PARAMETERS,
  type WebSearchArgs,
} from './web-search-args.ts'

export { WEB_SEARCH_LIMITS } from './web-search-args.ts'

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

const pagesOf = new WeakMap<HeadlessBrowser, Bulkhead>()

function pagesFor(browser: HeadlessBrowser): Bulkhead {
  let b = pagesOf.get(browser)
  if (b === undefined) {
    b = new Bulkhead(Math.max(1, browser.maxPages))
    pagesOf.set(browser, b)
  }
  return b
}

/** What one session's `web_search` keeps between calls: engines, breakers, coalescing, lease. */
interface SearchState {
  engines: readonly EngineConfig[]
  byName: Map<string, EngineConfig>
  /** Where the engines came from: `builtin_default` or `session`. */
  source: string
  breaker: CircuitBreaker
  coalescer: Coalescer<CascadeOutcome>
  env: EngineEnv
  /** Release the browser lease and take no new one. */
  close(): Promise<void>
}

/** The state of a new session's `web_search`; the browser is leased on first use. */
function searchState(options: WebSearchOptions, deps: WebSearchDeps): SearchState {
  const engines = options.engines ?? DEFAULT_ENGINES
  const breaker = new CircuitBreaker(options.breaker)
  const browser = options.browser
  let lease: BrowserLease | undefined
  let closed = false
  const env: EngineEnv = {
    fetch: deps.fetch ?? netSearchFetch(deps.net),
    net: deps.net,
    browser,
    pages: browser === undefined ? undefined : pagesFor(browser),
    breaker,
    retries: new RetryBudget(),
    apiKeys: options.apiKeys ?? {},
    now: () => Date.now(),
    lease: () => {
      if (lease === undefined && browser !== undefined && !closed) lease = browser.acquire()
    },
  }
  return {
    engines,
    byName: new Map(engines.map((e) => [e.name, e])),
    source: options.engines === undefined ? 'builtin_default' : 'session',
    breaker,
    coalescer: new Coalescer<CascadeOutcome>(),
    env,
    async close() {
      closed = true
      const held = lease
      lease = undefined
      await held?.release()
    },
  }
}

/** The engines a request names (all when it names none); an unknown name is refused. */
function selectEngines(state: SearchState, names: string[] | undefined): readonly EngineConfig[] {
  if (names === undefined) return state.engines
  const unknown = names.filter((n) => !state.byName.has(n))
  if (unknown.length > 0)
    throw new IsoagentError(
      'invalid_argument',
      `unknown engine(s) ${unknown.join(', ')}; this session has: ${state.engines.map((e) => e.name).join(', ')}`,
    )
  return names.map((n) => state.byName.get(n)!)
}

/** One `web_search` call: select engines, run the cascade (shared with identical calls), answer. */
async function runSearch(
  state: SearchState,
  args: WebSearchArgs,
  context: ToolContext,
): Promise<ToolResult> {
  const query = args.query.replace(/\s+/g, ' ').trim()
  if (query === '') throw new IsoagentError('invalid_argument', 'query is empty')
  const limit = args.limit ?? WEB_SEARCH_LIMITS.defaultLimit
  const timeoutMs = Math.round((args.timeout ?? WEB_SEARCH_LIMITS.defaultTimeoutS) * 1000)
  const selected = selectEngines(state, args.engines)
  const started = Date.now()
  const key = JSON.stringify([
    query,
    limit,
    args.engines === undefined ? null : [...args.engines].sort(),
  ])
  let shared: Awaited<ReturnType<Coalescer<CascadeOutcome>['run']>>
  try {
    shared = await state.coalescer.run(key, context.signal, (signal) =>
      runCascade({ query, limit, engines: selected, timeoutMs, signal }, state.env),
    )
  } catch (error) {
    if (context.signal.aborted) throw new IsoagentError('cancelled', 'web_search cancelled')
    throw error
  }
  if (context.signal.aborted) throw new IsoagentError('cancelled', 'web_search cancelled')
  const { source, breaker, coalescer } = state
  return searchAnswer({ args, query, limit, source, selected, shared, breaker, coalescer, started })
}

/** A session's `web_search` tool: its breakers, coalescing and browser lease are its own. */
export function createWebSearchTool(
  options: WebSearchOptions = {},
  deps: WebSearchDeps = {},
): ToolSpec<WebSearchArgs> {
  const state = searchState(options, deps)
  return {
    name: 'web_search',
    pathArguments: [],
    description: WEB_SEARCH_DESCRIPTION,
    parameters: WEB_SEARCH_PARAMETERS,
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
    close: () => state.close(),
    run: (args, context) => runSearch(state, args, context),
  }
}

/** The default `web_search` (default engines, no browser): a session builds its own. */
export const webSearchTool = createWebSearchTool()
