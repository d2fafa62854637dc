// The built web demo as a user gets it: `isoagent serve` (the built bin) on a free port, and a
// headless Debian Chromium page that fails the test on any console error or page error.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { CHROMIUM, MISSING_CHROMIUM } from '../runtime/chromium-launch.ts'

const bin = fileURLToPath(new URL('../../bin/isoagent.mjs', import.meta.url))
const start = fileURLToPath(new URL('../../bin/start.mjs', import.meta.url))
const built = fileURLToPath(new URL('../../dist/web-demo/index.html', import.meta.url))

/** A running `isoagent serve` with the demo. */
export interface DemoServer {
  /** `http://127.0.0.1:<port>` */
  url: string
  token: string
  /** What the server printed when it started. */
  banner: string
  /** The page URL the banner prints (`/?token=...`), plus `&mode=` when given. */
  pageUrl(mode?: 'tab' | 'server'): string
  stop(): Promise<void>
}

/**
 * Start the built CLI's `serve` with `args` (a workspace, rules) and wait for its banner. With
 * `entry: 'start'` it is `bin/start.mjs`, what `npm start` runs after the build: a copy of
 * examples/sample-project made a git repository, served with the demo's rules (`args` are
 * appended, as `npm start -- ARGS` does).
 */
export async function startDemoServer(
  args: string[],
  env: Record<string, string> = {},
  options: { entry?: 'serve' | 'start' } = {},
): Promise<DemoServer> {
  if (!existsSync(built)) throw new Error('dist/web-demo is missing: run `npm run build` first')
  const entry = options.entry === 'start' ? [start] : [bin, 'serve']
  const child: ChildProcess = spawn(
    process.execPath,
    [...entry, '--port', '0', '--token', 'demo-token-0123456789', ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        ISOAGENT_TOKEN: '',
        // `npm start` picks a model from these; a test's machine may have them.
        ...(options.entry === 'start'
          ? { ISOAGENT_MODEL_PROVIDER: '', ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '' }
          : {}),
        ...env,
      },
    },
  )
  let out = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()))
  const deadline = Date.now() + 20_000
  while (!out.includes('Ctrl-C stops the server.')) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`isoagent serve did not start:\n${out}`)
    await new Promise((r) => setTimeout(r, 25))
  }
  const open = /open: +(http:\/\/127\.0\.0\.1:\d+)\/\?token=(\S+)/.exec(out)
  if (!open) throw new Error(`no URL in the banner:\n${out}`)
  const url = open[1]!
  const token = decodeURIComponent(open[2]!)
  return {
    url,
    token,
    banner: out,
    pageUrl: (mode) => `${url}/?token=${encodeURIComponent(token)}${mode ? `&mode=${mode}` : ''}`,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done()
        child.once('exit', () => done())
        child.kill('SIGTERM')
      }),
  }
}

/** One browser for a test file, and the page errors seen so far. */
export interface DemoBrowser {
  browser: Browser
  context: BrowserContext
  page: Page
  /** Console errors and uncaught page errors, in order. */
  errors: string[]
  close(): Promise<void>
}

/** Launch Chromium and open a page that records console and page errors. */
export async function openDemoBrowser(
  viewport = { width: 1280, height: 800 },
): Promise<DemoBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(MISSING_CHROMIUM)
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  })
  const context = await browser.newContext({ viewport, acceptDownloads: true })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`)
  })
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`))
  return { browser, context, page, errors, close: () => browser.close() }
}

/** Go to the demo in `mode` and wait until its tools are listed. */
export async function gotoDemo(page: Page, url: string, mode: 'tab' | 'server'): Promise<void> {
  await page.goto(url)
  await page.waitForSelector(`body[data-ready="${mode}"]`, { timeout: 30_000 })
}

/** The text of the file panel's editor (CodeMirror's lines; files short enough to be all drawn). */
export function editorText(page: Page): Promise<string> {
  return page.$$eval('#editor .cm-line', (lines) => lines.map((l) => l.textContent).join('\n'))
}

/** Replace the whole text of the file panel's editor, as typing would. */
export async function fillEditor(page: Page, text: string): Promise<void> {
  await page.fill('#editor .cm-content', text)
}

/** Open `path` in the file panel through its path field and wait until it is shown. */
export async function openInEditor(page: Page, path: string): Promise<void> {
  await page.click('#tab-file')
  await page.fill('#open-path', path)
  await page.click('#open')
  await page.waitForFunction(
    (p) =>
      document.getElementById('file-title')?.textContent === p &&
      document.getElementById('editor')?.dataset.path === p &&
      !document.getElementById('file-status')?.textContent?.startsWith('Reading'),
    path,
  )
}

/** What {@link useDemo} starts for a test file (or a `describe` block). */
export interface DemoFixtureOptions {
  /** The server's arguments (a workspace, rules), or a function giving them once the file's
   * earlier `beforeAll` hooks ran (a fake started there). */
  args?: string[] | (() => string[])
  /** Environment variables of the server. */
  env?: Record<string, string>
  /** `serve` (default) or `start` (what `npm start` runs), as {@link startDemoServer}. */
  entry?: 'serve' | 'start'
  /** The mode the page opens in (and waits for). */
  mode: 'tab' | 'server'
  /** Put `&mode=` in the page URL (default true); false opens the URL the banner prints. */
  modeInUrl?: boolean
  viewport?: { width: number; height: number }
  /** Run after the browser and the server stopped (remove temporary directories). */
  cleanup?: () => void | Promise<void>
}

/** The running demo of a test file: its server, its browser and page, the page's errors. */
export interface DemoFixture {
  readonly server: DemoServer
  readonly demo: DemoBrowser
  readonly page: Page
  /** Console errors and uncaught page errors so far. */
  readonly errors: string[]
  /** The page URL in the fixture's mode (or `mode`). */
  url(mode?: 'tab' | 'server'): string
  /** Load the page again in the fixture's mode (or `mode`) and wait until it is ready. */
  reload(mode?: 'tab' | 'server'): Promise<void>
}

/**
 * The set-up every demo test file shares, as vitest hooks of the file (or of the `describe` it is
 * called in): `beforeAll` starts the built server with `options.args`, launches Chromium on a page
 * that records console and page errors, and opens the demo in `options.mode`; `afterAll` closes
 * the browser, stops the server and runs `options.cleanup`. The fields are read inside tests.
 */
export function useDemo(options: DemoFixtureOptions): DemoFixture {
  let server: DemoServer | undefined
  let demo: DemoBrowser | undefined
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`useDemo: no ${what} yet (read it inside a test)`)
    return value
  }
  const url = (mode = options.mode) =>
    options.modeInUrl === false && mode === options.mode
      ? ready(server, 'server').pageUrl()
      : ready(server, 'server').pageUrl(mode)
  const fixture: DemoFixture = {
    get server() {
      return ready(server, 'server')
    },
    get demo() {
      return ready(demo, 'browser')
    },
    get page() {
      return ready(demo, 'browser').page
    },
    get errors() {
      return ready(demo, 'browser').errors
    },
    url,
    reload: (mode = options.mode) => gotoDemo(fixture.page, url(mode), mode),
  }
  beforeAll(async () => {
    const args = typeof options.args === 'function' ? options.args() : (options.args ?? [])
    server = await startDemoServer(args, options.env, { entry: options.entry ?? 'serve' })
    demo = await openDemoBrowser(options.viewport)
    await fixture.reload()
  }, 60_000)
  afterAll(async () => {
    await demo?.close()
    await server?.stop()
    await options.cleanup?.()
  })
  return fixture
}
