// The page both Chromium program tests open (chromium.test.ts, chromium-worker.test.ts): a page
// entry bundled for the browser (Node built-ins forbidden), served from 127.0.0.1 with QuickJS's
// .wasm beside it as application/wasm (as a Vite build emits it) and any extra scripts, in Debian
// Chromium via playwright-core; page errors and requested paths recorded.
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { expect } from 'vitest'
import { CHROMIUM, launchChromium, MISSING_CHROMIUM } from '../runtime/chromium-launch.ts'
import { bundle } from '../runtime/bundle.ts'
import type { ProgramCaseResult } from './program-cases.ts'

/** What {@link openProgramPage} serves and waits for. */
export interface ProgramPageOptions {
  /** The page's module, bundled from this folder as `/program.js`. */
  entry: string
  /** The page's `<title>`. */
  title: string
  /** A global the entry sets once it is ready. */
  readyGlobal: string
  /** More scripts, by path (e.g. `/program-worker.js`). */
  scripts?: Record<string, string>
}

/** An open program page and what it recorded. */
export interface ProgramPage {
  page: Page
  /** The bundled entry. */
  code: string
  /** Paths the page requested, in order. */
  requests: string[]
  /** Uncaught errors and console errors of the page. */
  pageErrors: string[]
  /** Run one case of program-cases.ts in the page (`runProgramCase(name, loader)` of the entry). */
  runCase(name: string, loader?: string): Promise<ProgramCaseResult>
  close(): Promise<void>
}

const WASM = '/emscripten-module.wasm'
const JS = { 'content-type': 'text/javascript; charset=utf-8' }

function pageHtml(title: string): string {
  return `<!doctype html>
<html>
  <head><meta charset="utf-8"><link rel="icon" href="data:,"><title>${title}</title></head>
  <body><script type="module" src="/program.js"></script></body>
</html>
`
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((done, fail) => {
    server.once('error', fail)
    server.listen(0, '127.0.0.1', done)
  })
  return (server.address() as AddressInfo).port
}

/** Bundle, serve and open the page; fails (never skips) without Chromium. */
export async function openProgramPage(options: ProgramPageOptions): Promise<ProgramPage> {
  if (!existsSync(CHROMIUM)) throw new Error(MISSING_CHROMIUM)
  const code = await bundle({
    contents: options.entry,
    resolveDir: import.meta.dirname,
    target: 'browser',
  })
  const wasm = await readFile(
    createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm'),
  )
  const html = pageHtml(options.title)
  const scripts: Record<string, string> = { ...options.scripts, '/program.js': code }
  const requests: string[] = []
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
    requests.push(path)
    const script = scripts[path]
    if (path === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html)
    else if (script !== undefined) res.writeHead(200, JS).end(script)
    else if (path === WASM) res.writeHead(200, { 'content-type': 'application/wasm' }).end(wasm)
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
  })
  const port = await listen(server)
  let browser: Browser | undefined
  const close = async () => {
    await browser?.close()
    await new Promise<void>((done) => server.close(() => done()))
  }
  try {
    browser = await launchChromium()
    const page = await browser.newPage()
    const pageErrors: string[] = []
    page.on('pageerror', (error) => pageErrors.push(error.message))
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text())
    })
    await page.goto(`http://127.0.0.1:${port}/`)
    await page.waitForFunction((name) => name in globalThis, options.readyGlobal, {
      timeout: 20_000,
    })
    const runCase = async (name: string, loader = 'default'): Promise<ProgramCaseResult> => {
      const results = await page.evaluate(
        ([n, l]) =>
          (
            globalThis as unknown as {
              runProgramCase(n: string, l: string): Promise<ProgramCaseResult[]>
            }
          ).runProgramCase(n, l),
        [name, loader] as const,
      )
      expect(results).toHaveLength(1)
      return results[0]!
    }
    return { page, code, requests, pageErrors, runCase, close }
  } catch (error) {
    await close()
    throw error
  }
}

/** How many times the page fetched QuickJS's .wasm. */
export const wasmRequests = (page: ProgramPage) => page.requests.filter((p) => p === WASM).length
