// A page bundled for the browser (Node built-ins forbidden), served from 127.0.0.1 and opened in
// Debian Chromium (playwright-core); `call` runs one of its `globalThis.isoagentPage` functions.
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { CHROMIUM, launchChromium, MISSING_CHROMIUM } from '../runtime/chromium-launch.ts'
import { bundle } from '../runtime/bundle.ts'

/** An open page and what it reported. */
export interface ChromiumPage {
  origin: string
  errors: string[]
  /** `isoagentPage[fn](...args)` in the page, its result through JSON. */
  call<T>(fn: string, ...args: unknown[]): Promise<T>
  close(): Promise<void>
}

/** Bundle `entry` (a file setting `globalThis.isoagentPage`) and open it in Chromium. */
export async function openChromiumPage(entry: string): Promise<ChromiumPage> {
  if (!existsSync(CHROMIUM)) throw new Error(MISSING_CHROMIUM)
  const code = await bundle({ entry, target: 'browser' })
  const html =
    '<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head>' +
    '<body><script type="module" src="/page.js"></script></body></html>'
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
    if (path === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html)
    else if (path === '/page.js')
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(code)
    else res.writeHead(404).end()
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const browser: Browser = await launchChromium()
  const page: Page = await (await browser.newContext()).newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  await page.goto(`${origin}/`)
  await page.waitForFunction(() => 'isoagentPage' in globalThis, undefined, { timeout: 20_000 })
  return {
    origin,
    errors,
    async call<T>(fn: string, ...args: unknown[]): Promise<T> {
      const json = await page.evaluate(
        async ([name, rest]) => {
          const api = (
            globalThis as unknown as {
              isoagentPage: Record<string, (...a: unknown[]) => Promise<unknown>>
            }
          ).isoagentPage
          return JSON.stringify(await api[name as string]!(...(rest as unknown[])))
        },
        [fn, args] as const,
      )
      return JSON.parse(json) as T
    },
    async close() {
      await browser.close()
      await new Promise((done) => server.close(done))
    },
  }
}
