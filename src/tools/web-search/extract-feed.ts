import { parse, type HTMLElement } from 'node-html-parser'
import type { ExtractedResult } from '../../headless-browser.ts'

function clean(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
}

/** Markup inside a CDATA section or an escaped description, reduced to its text. */
function textOf(element: HTMLElement | null): string {
  if (element === null) return ''
  const inner = element.text
  return clean(/[<>]/.test(inner) ? parse(inner).text : inner)
}

/** True when the body looks like an RSS or Atom document. */
export function looksLikeFeed(body: string): boolean {
  return /<(rss|feed|rdf:RDF)[\s>]/i.test(body.slice(0, 4096))
}

/** Items of an RSS 2.0 / RSS 1.0 feed or entries of an Atom feed. */
export function extractFeed(xml: string): ExtractedResult[] {
  const prepared = xml.replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, (_, inner: string) =>
    escapeXml(inner),
  )
  // `link` holds text in feeds; as HTML it would be a void element.
  const root = parse(prepared, { voidTag: { tags: [] }, comment: false })
  const results: ExtractedResult[] = []
  for (const item of root.querySelectorAll('item')) {
    results.push({
      title: textOf(item.querySelector('title')),
      url:
        clean(item.querySelector('link')?.text ?? '') ||
        clean(item.querySelector('guid')?.text ?? ''),
      snippet: textOf(item.querySelector('description')),
    })
  }
  for (const entry of root.querySelectorAll('entry')) {
    const links = entry.querySelectorAll('link')
    const link =
      links.find((l) => (l.getAttribute('rel') ?? 'alternate') === 'alternate') ?? links[0]
    results.push({
      title: textOf(entry.querySelector('title')),
      url: link?.getAttribute('href') ?? '',
      snippet: textOf(entry.querySelector('summary') ?? entry.querySelector('content')),
    })
  }
  return results
}
