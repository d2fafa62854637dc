// The HTTP/RSS and API tier scenarios, run the same way on Node and in workerd against the loopback
// fakes; each gives a summary the tests compare (imports only the core, so it bundles for workerd).
import { Agent, memoryWorkspace, type EngineConfig, type ToolResult } from '../../adapters/index.ts'

const SEL = { result: '.result', title: '.title', url: '.title', snippet: '.snippet', skip: '.ad' }

/** The fake engines at `base`, as session engine configs. */
export function fakeEngineConfigs(base: string): EngineConfig[] {
  const html = (name: string, path: string): EngineConfig => ({
    name,
    kind: 'html',
    url: `${base}${path}?q={query}`,
    selectors: SEL,
  })
  return [
    { name: 'browser', kind: 'browser', url: `${base}/script?q={query}`, selectors: SEL },
    html('html', '/html'),
    html('html_one', '/html-one'),
    html('html_script', '/script'),
    html('empty', '/empty'),
    html('captcha', '/captcha'),
    html('consent', '/consent'),
    html('limited', '/429'),
    html('broken', '/500'),
    html('slow', '/slow'),
    html('garbage', '/garbage'),
    { name: 'rss', kind: 'rss', url: `${base}/rss?q={query}` },
    { name: 'atom', kind: 'rss', url: `${base}/atom?q={query}` },
    { name: 'rss_garbage', kind: 'rss', url: `${base}/html?q={query}` },
    {
      name: 'api',
      kind: 'json',
      url: `${base}/api?q={query}&n={limit}`,
      headers: { 'x-api-key': '{key}' },
      fields: { results: 'data.items', title: 'name', url: 'link', snippet: 'text' },
    },
    {
      name: 'api_quota',
      kind: 'json',
      url: `${base}/api-quota?q={query}`,
      fields: { results: 'data.items', title: 'name', url: 'link' },
    },
    {
      name: 'api_not_json',
      kind: 'json',
      url: `${base}/not-json?q={query}`,
      fields: { results: 'data.items', title: 'name', url: 'link' },
    },
  ]
}

/** A scenario: the engines to ask and what to ask. */
export interface SearchScenario {
  name: string
  args: Record<string, unknown>
  apiKeys?: Record<string, string>
}

export const SCENARIOS: SearchScenario[] = [
  { name: 'html page', args: { query: 'rust', engines: ['html'] } },
  {
    name: 'html page, script-inserted results unseen',
    args: { query: 'rust', engines: ['html_script'] },
  },
  { name: 'rss feed', args: { query: 'rust', engines: ['rss'] } },
  { name: 'atom feed', args: { query: 'rust', engines: ['atom'] } },
  {
    name: 'json api with key',
    args: { query: 'rust', engines: ['api'] },
    apiKeys: { api: 'secret-key' },
  },
  { name: 'json api without key', args: { query: 'rust', engines: ['api'] } },
  {
    name: 'cascade: empty http tier falls to the api',
    args: { query: 'rust', engines: ['empty', 'api'] },
    apiKeys: { api: 'secret-key' },
  },
  {
    name: 'cascade: http tier enough, api not needed',
    args: { query: 'rust', engines: ['html', 'api'] },
    apiKeys: { api: 'secret-key' },
  },
  {
    name: 'partial: an engine error beside enough results',
    args: { query: 'rust', engines: ['html', 'broken'] },
  },
  {
    name: 'fail closed: walls, limits, errors, garbage',
    args: {
      query: 'rust',
      engines: [
        'captcha',
        'consent',
        'limited',
        'broken',
        'garbage',
        'rss_garbage',
        'api_quota',
        'api_not_json',
      ],
      format: 'json',
    },
  },
  {
    name: 'fail closed: too few results',
    args: { query: 'rust', engines: ['html_one'], limit: 10 },
  },
  { name: 'slow engine past the deadline', args: { query: 'rust', engines: ['slow'], timeout: 1 } },
  { name: 'json output', args: { query: 'rust', engines: ['rss'], format: 'json', limit: 2 } },
]

/** What the tests compare of a result. */
export interface ScenarioSummary {
  name: string
  exitCode: number
  status: unknown
  errorType: string | null
  urls: string[]
  titles: string[]
  tiers: {
    tier: string
    decision: string
    engines: { engine: string; outcome: string; kind: string | null }[]
  }[]
  failures: { engine: string; kind: string; retry_after_ms: number | null }[]
  output: string
  candidates: number
}

function summarise(name: string, result: ToolResult): ScenarioSummary {
  const m = (result.metadata ?? {}) as Record<string, unknown>
  const results = (m.results ?? []) as { url: string; title: string }[]
  const tiers = (m.tiers ?? []) as {
    tier: string
    decision: string
    engines: { engine: string; outcome: string; failure?: { kind: string } }[]
  }[]
  const failures = (m.engine_failures ?? []) as {
    engine: string
    kind: string
    retry_after_ms?: number
  }[]
  const kind = result.errorKind as { type: string; candidates?: unknown[] } | undefined
  return {
    name,
    exitCode: result.exitCode,
    status: m.status,
    errorType: kind?.type ?? null,
    urls: results.map((r) => r.url),
    titles: results.map((r) => r.title),
    tiers: tiers.map((t) => ({
      tier: t.tier,
      decision: t.decision,
      engines: t.engines.map((e) => ({
        engine: e.engine,
        outcome: e.outcome,
        kind: e.failure?.kind ?? null,
      })),
    })),
    failures: failures.map((f) => ({
      engine: f.engine,
      kind: f.kind,
      retry_after_ms: f.retry_after_ms ?? null,
    })),
    output: result.output,
    candidates: kind?.candidates?.length ?? 0,
  }
}

/** Run every scenario (each in its own session) against the fakes at `base`. */
export async function runScenarios(base: string): Promise<ScenarioSummary[]> {
  const out: ScenarioSummary[] = []
  for (const scenario of SCENARIOS) {
    const session = await Agent.create().session(memoryWorkspace(), {
      net: { allowHosts: ['127.0.0.1'] },
      webSearch: {
        engines: fakeEngineConfigs(base),
        ...(scenario.apiKeys ? { apiKeys: scenario.apiKeys } : {}),
      },
    })
    try {
      out.push(summarise(scenario.name, await session.tool('web_search', scenario.args)))
    } finally {
      await session.close()
    }
  }
  return out
}
