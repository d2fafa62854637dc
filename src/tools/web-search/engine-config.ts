import { IsoagentError } from '../../errors.ts'
import type { ResultSelectors } from '../../headless-browser.ts'

/** How an engine is queried: a rendered page, an HTML page, an RSS/Atom feed or a JSON API. */
export type EngineKind = 'browser' | 'html' | 'rss' | 'json'

/** Cascade tier of an engine kind: browser, then HTTP (html, rss), then API (json). */
export type EngineTier = 'browser' | 'http' | 'api'

export const TIER_ORDER: readonly EngineTier[] = ['browser', 'http', 'api']

/** Where a JSON API's results are: dotted paths (`web.results`, `title`, `meta.url`). */
export interface JsonFields {
  results: string
  title: string
  url: string
  snippet?: string
}

/**
 * A search engine, as data. `url` holds `{query}` (URL-encoded query), optionally `{limit}` and
 * `{key}` (the engine's API key from `webSearch.apiKeys[name]`); `headers` values may hold `{key}`
 * too. An engine needing a key it has not got is skipped.
 */
export interface EngineConfig {
  name: string
  kind: EngineKind
  url: string
  /** browser and html engines. */
  selectors?: ResultSelectors
  /** json engines. */
  fields?: JsonFields
  headers?: Record<string, string>
}

const NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/
const KINDS = new Set<EngineKind>(['browser', 'html', 'rss', 'json'])

export function tierOf(kind: EngineKind): EngineTier {
  return kind === 'browser' ? 'browser' : kind === 'json' ? 'api' : 'http'
}

/** True when the engine's URL or headers need an API key. */
export function needsKey(engine: EngineConfig): boolean {
  return (
    engine.url.includes('{key}') ||
    Object.values(engine.headers ?? {}).some((v) => v.includes('{key}'))
  )
}

function fail(message: string): never {
  throw new IsoagentError('invalid_argument', `webSearch.engines: ${message}`)
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === 'string')
  )
}

/** Check engines given in session options (throws `invalid_argument`). */
export function checkEngines(engines: unknown): asserts engines is EngineConfig[] {
  if (!Array.isArray(engines) || engines.length === 0 || engines.length > 32)
    fail('must be an array of 1 to 32 engines')
  const names = new Set<string>()
  for (const e of engines as unknown[]) {
    if (typeof e !== 'object' || e === null) fail('each engine must be an object')
    const engine = e as Partial<EngineConfig>
    if (typeof engine.name !== 'string' || !NAME.test(engine.name))
      fail(`engine name ${JSON.stringify(engine.name)} must match ${NAME.source}`)
    if (names.has(engine.name)) fail(`engine ${engine.name} is given twice`)
    names.add(engine.name)
    if (typeof engine.kind !== 'string' || !KINDS.has(engine.kind))
      fail(`engine ${engine.name}: kind must be browser, html, rss or json`)
    if (typeof engine.url !== 'string' || !engine.url.includes('{query}'))
      fail(`engine ${engine.name}: url must be a string holding {query}`)
    let parsed: URL
    try {
      parsed = new URL(engine.url.replaceAll(/\{(query|limit|key)\}/g, 'x'))
    } catch {
      fail(`engine ${engine.name}: url is not a URL`)
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      fail(`engine ${engine.name}: url must be http(s)`)
    if (engine.headers !== undefined && !isStringRecord(engine.headers))
      fail(`engine ${engine.name}: headers must map names to strings`)
    if (engine.kind === 'browser' || engine.kind === 'html') {
      const s = engine.selectors
      if (
        !isStringRecord(s) ||
        typeof s.result !== 'string' ||
        typeof s.title !== 'string' ||
        typeof s.url !== 'string'
      )
        fail(`engine ${engine.name}: selectors { result, title, url } are required`)
    }
    if (engine.kind === 'json') {
      const f = engine.fields
      if (
        !isStringRecord(f) ||
        typeof f.results !== 'string' ||
        typeof f.title !== 'string' ||
        typeof f.url !== 'string'
      )
        fail(`engine ${engine.name}: fields { results, title, url } are required`)
    }
  }
}

/** The engine's request URL for `query`. */
export function engineUrl(
  engine: EngineConfig,
  query: string,
  limit: number,
  key: string | undefined,
): string {
  return engine.url
    .replaceAll('{query}', encodeURIComponent(query))
    .replaceAll('{limit}', String(limit))
    .replaceAll('{key}', encodeURIComponent(key ?? ''))
}

/** The engine's request headers, `{key}` filled in. */
export function engineHeaders(
  engine: EngineConfig,
  key: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(engine.headers ?? {}))
    headers[name] = value.replaceAll('{key}', key ?? '')
  return headers
}
