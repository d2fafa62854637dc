import type { ExtractedResult } from '../../headless-browser.ts'
import type { EngineTier } from './engine-config.ts'
import { cleanResultUrl, dedupeKey, domainOf } from './normalize-url.ts'

/** One merged result. */
export interface SearchResult {
  title: string
  url: string
  snippet: string
  domain: string
  /** Engines that returned it, first finder first. */
  engines: string[]
  tier: EngineTier
}

/** A result as an engine gave it, usable or not (the failure envelope's candidates). */
export interface Candidate {
  engine: string
  title: string
  url: string
  usable: boolean
}

/** Results of every engine, merged in arrival order and de-duplicated by normalised URL. */
export class ResultSet {
  readonly results: SearchResult[] = []
  readonly candidates: Candidate[] = []
  private readonly byKey = new Map<string, SearchResult>()

  add(engine: string, tier: EngineTier, raw: readonly ExtractedResult[]): void {
    for (const r of raw) {
      const url = r.url === '' ? undefined : cleanResultUrl(r.url)
      const title = r.title.trim()
      const usable = url !== undefined && title !== ''
      this.candidates.push({
        engine,
        title: title.slice(0, 300),
        url: (url ?? r.url).slice(0, 2048),
        usable,
      })
      if (!usable) continue
      const key = dedupeKey(url)
      const existing = this.byKey.get(key)
      if (existing !== undefined) {
        if (!existing.engines.includes(engine)) existing.engines.push(engine)
        if (existing.snippet === '' && r.snippet !== '') existing.snippet = r.snippet
        continue
      }
      const result: SearchResult = {
        title: title.slice(0, 500),
        url,
        snippet: r.snippet.slice(0, 1000),
        domain: domainOf(url),
        engines: [engine],
        tier,
      }
      this.byKey.set(key, result)
      this.results.push(result)
    }
  }

  distinctDomains(): number {
    return new Set(this.results.map((r) => r.domain)).size
  }
}
