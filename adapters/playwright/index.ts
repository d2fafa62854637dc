// The `isoagent/playwright` entry: web_search's browser tier on Playwright (Node only).
export { playwrightBrowser } from './playwright-browser.ts'
export type { PlaywrightBrowserOptions, PlaywrightHeadlessBrowser } from './playwright-browser.ts'
