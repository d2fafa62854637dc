import { chromium, type Browser, type LaunchOptions } from 'playwright-core'
import type {
  BrowserLease,
  BrowserSearchFailure,
  BrowserSearchPage,
  BrowserSearchRequest,
  ExtractedResult,
  HeadlessBrowser,
} from '../../src/index.ts'

/** Options of {@link playwrightBrowser}. */
export interface PlaywrightBrowserOptions {
  /** The Chromium binary (e.g. `/usr/bin/chromium`). */
  executablePath: string
  /** More launch options; `args` are added to the defaults (`--no-sandbox`, `--disable-gpu`, ...). */
  launchOptions?: Omit<LaunchOptions, 'executablePath'>
  /** Most pages open at once (default 4); more searches wait for a page. */
  maxPages?: number
  /** Close the browser after this long without a search (default 60 s). */
  idleMs?: number
}

/** A {@link HeadlessBrowser} on Playwright, with its lifecycle for hosts and tests. */
export interface PlaywrightHeadlessBrowser extends HeadlessBrowser {
  /** Whether a browser process is running now. */
  readonly running: boolean
  /** Browsers launched so far (a crashed one is replaced by the next launch). */
  readonly launches: number
  /** Close the browser now (the next search launches it again). */
  close(): Promise<void>
}

const DEFAULT_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage']
const ALLOWED_TYPES = new Set(['document', 'script', 'xhr', 'fetch'])
/** Longest wait for results (or a wall) to appear once the document has loaded. */
const RESULT_WAIT_MS = 5_000

const shared = new Map<string, PlaywrightHeadlessBrowser>()

interface PageExtraction {
  results: ExtractedResult[]
  wall: boolean
  textSample: string
}

/**
 * The extraction run inside the page, as source text: a function handed to `evaluate` would be
 * serialised with whatever helpers the TypeScript loader wrapped it in.
 */
const EXTRACT_IN_PAGE = `(selectors) => {
  const clean = (s) => (s || '').replace(/\\s+/g, ' ').trim()
  const results = []
  for (const el of Array.from(document.querySelectorAll(selectors.result))) {
    if (selectors.skip && el.closest(selectors.skip) !== null) continue
    const link = el.querySelector(selectors.url)
    const href = link ? link.getAttribute('href') : null
    const url = href === null ? clean(link && link.textContent) : (link.href || href)
    const title = el.querySelector(selectors.title)
    const snippet = selectors.snippet ? el.querySelector(selectors.snippet) : null
    results.push({ title: clean(title && title.textContent), url, snippet: clean(snippet && snippet.textContent) })
  }
  const wall = !!selectors.wall && document.querySelector(selectors.wall) !== null
  const text = document.body ? document.body.innerText : ''
  return { results, wall, textSample: clean(text).slice(0, 2000) }
}`

class PlaywrightHeadless implements PlaywrightHeadlessBrowser {
  readonly maxPages: number
  private browser: Promise<Browser> | undefined
  private leases = 0
  private active = 0
  private idleTimer: ReturnType<typeof setTimeout> | undefined
  private launched = 0
  private readonly waiting: (() => void)[] = []

  constructor(private readonly options: PlaywrightBrowserOptions) {
    this.maxPages = options.maxPages ?? 4
  }

  get running(): boolean {
    return this.browser !== undefined
  }

  get launches(): number {
    return this.launched
  }

  acquire(): BrowserLease {
    this.leases++
    let released = false
    return {
      release: async () => {
        if (released) return
        released = true
        this.leases--
        if (this.leases === 0) await this.close()
      },
    }
  }

  async close(): Promise<void> {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer)
    this.idleTimer = undefined
    const current = this.browser
    this.browser = undefined
    if (current === undefined) return
    const browser = await current.catch(() => undefined)
    await browser?.close().catch(() => undefined)
  }

  private launch(): Promise<Browser> {
    if (this.browser !== undefined) return this.browser
    const { launchOptions = {} } = this.options
    const started = chromium.launch({
      ...launchOptions,
      executablePath: this.options.executablePath,
      args: [...DEFAULT_ARGS, ...(launchOptions.args ?? [])],
    })
    this.launched++
    this.browser = started
    started.then(
      (browser) =>
        browser.on('disconnected', () => {
          if (this.browser === started) this.browser = undefined
        }),
      () => {
        if (this.browser === started) this.browser = undefined
      },
    )
    return started
  }

  private async slot(signal: AbortSignal): Promise<boolean> {
    if (this.active < this.maxPages) {
      this.active++
      return true
    }
    return new Promise<boolean>((resolve) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort)
        resolve(true)
      }
      const onAbort = (): void => {
        const i = this.waiting.indexOf(grant)
        if (i >= 0) this.waiting.splice(i, 1)
        resolve(false)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.waiting.push(grant)
    })
  }

  private freeSlot(): void {
    const next = this.waiting.shift()
    if (next !== undefined) next()
    else this.active--
    if (this.active === 0 && this.waiting.length === 0) this.armIdle()
  }

  private armIdle(): void {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer)
    this.idleTimer = setTimeout(() => void this.close(), this.options.idleMs ?? 60_000)
    this.idleTimer.unref?.()
  }

  async search(request: BrowserSearchRequest): Promise<BrowserSearchPage | BrowserSearchFailure> {
    const cancelled: BrowserSearchFailure = { ok: false, kind: 'cancelled', message: 'cancelled' }
    if (request.signal.aborted) return cancelled
    if (!(await this.slot(request.signal))) return cancelled
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer)
    this.idleTimer = undefined
    const deadlineAt = Date.now() + request.timeoutMs
    try {
      let browser: Browser
      try {
        browser = await this.launch()
      } catch (error) {
        return { ok: false, kind: 'launch', message: messageOf(error) }
      }
      return await this.render(browser, request, deadlineAt)
    } finally {
      this.freeSlot()
    }
  }

  private async render(
    browser: Browser,
    request: BrowserSearchRequest,
    deadlineAt: number,
  ): Promise<BrowserSearchPage | BrowserSearchFailure> {
    let context: Awaited<ReturnType<Browser['newContext']>> | undefined
    let timedOut = false
    const stop = (): void => void context?.close().catch(() => undefined)
    const timer = setTimeout(
      () => {
        timedOut = true
        stop()
      },
      Math.max(1, deadlineAt - Date.now()),
    )
    request.signal.addEventListener('abort', stop, { once: true })
    try {
      context = await browser.newContext({ serviceWorkers: 'block', acceptDownloads: false })
      await context.route('**/*', (route) => {
        const r = route.request()
        const origin = URL.canParse(r.url()) ? new URL(r.url()).origin : ''
        if (origin === request.allowedOrigin && ALLOWED_TYPES.has(r.resourceType()))
          return route.continue()
        return route.abort('blockedbyclient')
      })
      const page = await context.newPage()
      const remaining = (): number => Math.max(1, deadlineAt - Date.now())
      const response = await page.goto(request.url, {
        waitUntil: 'domcontentloaded',
        timeout: remaining(),
      })
      const s = request.selectors
      const waitFor = s.wall === undefined ? s.result : `${s.result}, ${s.wall}`
      const failed = (response?.status() ?? 200) >= 400
      if (!failed)
        await page
          .waitForSelector(waitFor, {
            state: 'attached',
            timeout: Math.min(RESULT_WAIT_MS, remaining()),
          })
          .catch(() => undefined)
      const extraction = (await page.evaluate(
        `(${EXTRACT_IN_PAGE})(${JSON.stringify(s)})`,
      )) as PageExtraction
      const retryAfter = response?.headers()['retry-after']
      return {
        ok: true,
        status: response?.status() ?? 0,
        finalUrl: page.url(),
        results: extraction.results,
        wall: extraction.wall,
        textSample: extraction.textSample,
        ...(retryAfter !== undefined ? { retryAfter } : {}),
      }
    } catch (error) {
      if (request.signal.aborted) return { ok: false, kind: 'cancelled', message: 'cancelled' }
      if (timedOut || Date.now() >= deadlineAt)
        return { ok: false, kind: 'timeout', message: 'no results page before the deadline' }
      if (!browser.isConnected()) {
        if (this.browser !== undefined && (await this.browser.catch(() => undefined)) === browser)
          this.browser = undefined
        return { ok: false, kind: 'crashed', message: messageOf(error) }
      }
      return { ok: false, kind: 'navigation', message: messageOf(error) }
    } finally {
      clearTimeout(timer)
      request.signal.removeEventListener('abort', stop)
      await context?.close().catch(() => undefined)
    }
  }
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  return text.split('\n')[0]!.slice(0, 300)
}

/**
 * The `web_search` browser tier on Playwright and a local Chromium. One browser per process per
 * options (calls with the same options share it), launched on the first search, a fresh context
 * per search whose requests are limited to the engine's origin and to documents, scripts and
 * XHR/fetch, at most `maxPages` pages at once. A browser that crashed is replaced on the next
 * search; it closes when the last session holding it closes, or after `idleMs` without searches.
 */
export function playwrightBrowser(options: PlaywrightBrowserOptions): PlaywrightHeadlessBrowser {
  if (typeof options?.executablePath !== 'string' || options.executablePath === '')
    throw new TypeError('playwrightBrowser: executablePath is required')
  const key = JSON.stringify([
    options.executablePath,
    options.launchOptions ?? null,
    options.maxPages ?? null,
    options.idleMs ?? null,
  ])
  let browser = shared.get(key)
  if (browser === undefined) {
    browser = new PlaywrightHeadless(options)
    shared.set(key, browser)
  }
  return browser
}
