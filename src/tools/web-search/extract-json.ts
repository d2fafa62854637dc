import type { ExtractedResult } from '../../headless-browser.ts'
import type { JsonFields } from './engine-config.ts'

function at(value: unknown, path: string): unknown {
  let current = value
  for (const key of path.split('.')) {
    if (typeof current !== 'object' || current === null) return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : ''
}

/** Results of a JSON API answer, or undefined when `fields.results` is not an array there. */
export function extractJson(body: unknown, fields: JsonFields): ExtractedResult[] | undefined {
  const items = at(body, fields.results)
  if (!Array.isArray(items)) return undefined
  return items.map((item) => ({
    title: text(at(item, fields.title)),
    url: text(at(item, fields.url)),
    snippet: fields.snippet === undefined ? '' : text(at(item, fields.snippet)),
  }))
}
