// Steps the showcase tests (governance, projection, tab vs server, capability panels) share.
import type { Page } from 'playwright-core'

/** 2,000 lines of 156 bytes (312 KB): a `read` of it is cut to the 100 KiB preview. */
export const BIG_TEXT = Array.from(
  { length: 2000 },
  (_, i) => `line ${String(i + 1).padStart(4, '0')} ${'x'.repeat(146)}`,
).join('\n')

/** Open a panel by its tab. */
export async function showPanel(page: Page, id: string): Promise<void> {
  await page.click(`#tab-${id}`)
  await page.waitForSelector(`#panel-${id}:not([hidden])`)
}

/** Run a search from the semantic search panel in `mode`; the result panel's text. */
export async function retrievalSearch(page: Page, mode: string, query: string): Promise<string> {
  await page.selectOption('#retrieval-mode', mode)
  await page.fill('#retrieval-query', query)
  await page.click('#retrieval-run')
  await page.waitForSelector('#retrieval-result .result')
  return (await page.textContent('#retrieval-result'))!
}

/** Run `tool` with `args` from the governance panel's "Try a call" (the governed path). */
export async function governedCall(
  page: Page,
  tool: string,
  args: Record<string, unknown>,
): Promise<void> {
  await showPanel(page, 'governance')
  await page.selectOption('#gov-tool', tool)
  await page.fill('#gov-args', JSON.stringify(args))
  await page.click('#gov-run')
}

/** Wait until the governance panel shows a result; its error kind ('' on success). */
export async function governedResult(page: Page): Promise<string> {
  await page.waitForSelector('#gov-result .result')
  return (await page.getAttribute('#gov-result', 'data-error-kind')) ?? ''
}

/** Click the "Try" button of a rule in the governance panel. */
export async function tryRule(page: Page, rule: string): Promise<void> {
  await showPanel(page, 'governance')
  await page.click(`#gov-rules button.gov-try[data-rule="${rule}"]`)
  await page.click('#gov-run')
}
