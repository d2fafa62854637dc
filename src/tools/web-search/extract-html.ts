import { parse, type HTMLElement } from 'node-html-parser'
import type { ExtractedResult, ResultSelectors } from '../../headless-browser.ts'

function clean(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

function urlOf(element: HTMLElement | null): string {
  if (element === null) return ''
  return element.getAttribute('href') ?? clean(element.text)
}

/** A parsed HTML results page: its results (`skip` left out) and its visible text sample. */
export interface HtmlExtraction {
  results: ExtractedResult[]
  wall: boolean
  textSample: string
}

/**
 * Results of a plain HTML page, as the page's markup has them: results a page script would
 * insert are not there (only the browser tier sees those).
 */
export function extractHtml(html: string, selectors: ResultSelectors): HtmlExtraction {
  const root = parse(html, { comment: false })
  const results: ExtractedResult[] = []
  for (const element of root.querySelectorAll(selectors.result)) {
    if (selectors.skip !== undefined && element.closest(selectors.skip) !== null) continue
    const title = clean(element.querySelector(selectors.title)?.text ?? '')
    const url = urlOf(element.querySelector(selectors.url))
    const snippet =
      selectors.snippet === undefined
        ? ''
        : clean(element.querySelector(selectors.snippet)?.text ?? '')
    results.push({ title, url, snippet })
  }
  const wall = selectors.wall !== undefined && root.querySelector(selectors.wall) !== null
  for (const s of root.querySelectorAll('script, style, noscript')) s.remove()
  return { results, wall, textSample: clean(root.text).slice(0, 2000) }
}
