import type { RetrievalRequirementsNotMet } from '../../tool-result.ts'
import type { CascadeOutcome } from './cascade.ts'
import type { SearchResult } from './merge-results.ts'

/** The text output of a successful search. */
export function renderText(
  query: string,
  outcome: CascadeOutcome,
  results: SearchResult[],
): string {
  const engines = [...new Set(results.flatMap((r) => r.engines))].join(', ')
  const lines = [
    `Search results for ${JSON.stringify(query)} (${outcome.status}: ${results.length} from ${engines}):`,
  ]
  results.forEach((r, i) => {
    lines.push('', `${i + 1}. ${r.title}`, `   ${r.url}`)
    if (r.snippet !== '') lines.push(`   ${r.snippet}`)
  })
  if (outcome.status === 'partial') {
    const failed = outcome.runs.filter((r) => r.failure !== undefined && r.outcome !== 'ok')
    lines.push('', `Partial: ${failed.map((r) => `${r.engine} ${r.failure!.kind}`).join(', ')}`)
  }
  return lines.join('\n')
}

/** The JSON output of a successful search: an array of results. */
export function renderJson(results: SearchResult[]): string {
  return JSON.stringify(
    results.map((r) => ({
      title: r.title,
      url: r.url,
      snippet: r.snippet,
      engines: r.engines,
      tier: r.tier,
    })),
    null,
    2,
  )
}

/** The text of a search that failed closed. */
export function renderFailure(envelope: RetrievalRequirementsNotMet): string {
  const lines = [`web_search failed closed: ${envelope.message}`]
  for (const f of envelope.engine_failures) {
    const retry =
      f.retry_after_ms === undefined ? '' : ` (retry after ${Math.ceil(f.retry_after_ms / 1000)} s)`
    lines.push(`- ${f.engine}: ${f.kind}: ${f.message}${retry}`)
  }
  return lines.join('\n')
}

/** The failure envelope of an outcome that missed the requirements. */
export function envelopeOf(outcome: CascadeOutcome): RetrievalRequirementsNotMet {
  const failures = outcome.runs.flatMap((r) => (r.failure === undefined ? [] : [r.failure]))
  const retryAfters = failures.flatMap((f) =>
    f.retry_after_ms === undefined ? [] : [f.retry_after_ms],
  )
  const h = outcome.health
  const t = outcome.requirements
  return {
    type: 'retrieval_requirements_not_met',
    message:
      `${h.usable_result_count} usable result(s) (need ${t.min_usable_results}) from ` +
      `${h.distinct_domains} domain(s) (need ${t.min_distinct_domains}); ` +
      `${h.engine_errors} engine error(s) of ${outcome.runs.length} engine(s)` +
      (outcome.timedOut ? '; the deadline passed' : ''),
    candidates: outcome.set.candidates.slice(0, 20),
    health: { ...h },
    thresholds: { ...t },
    engine_failures: failures,
    retry_after_ms: retryAfters.length === 0 ? null : Math.min(...retryAfters),
  }
}
