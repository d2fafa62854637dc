/**
 * CSS selectors that find results on a rendered results page. `result` matches one result's
 * element; `title`, `url` and `snippet` are looked up inside it (`url` reads the element's
 * `href`, else its text). `skip` matches result elements to leave out (ads). `wall` matches a
 * captcha or consent wall.
 */
export interface ResultSelectors {
  result: string
  title: string
  url: string
  snippet?: string
  skip?: string
  wall?: string
}

/** One result as a results page shows it, before normalisation. */
export interface ExtractedResult {
  title: string
  url: string
  snippet: string
}

/** One results page to render and extract. */
export interface BrowserSearchRequest {
  /** The engine's results-page URL (already checked by the caller). */
  url: string
  /**
   * The only origin the page may load from. Every other request, and every request that is not
   * a document, a script or an XHR/fetch, is refused.
   */
  allowedOrigin: string
  selectors: ResultSelectors
  /** Deadline for the whole search (context, navigation, waiting, extraction). */
  timeoutMs: number
  signal: AbortSignal
}

/** What a rendered results page gave. */
export interface BrowserSearchPage {
  ok: true
  /** HTTP status of the main document (0 when unknown). */
  status: number
  /** The page's URL after navigation (redirects followed by the browser). */
  finalUrl: string
  /** Results after page scripts ran, ads (`skip`) left out, in page order. */
  results: ExtractedResult[]
  /** True when `selectors.wall` matched. */
  wall: boolean
  /** The page's visible text, first 2000 characters (for wall detection). */
  textSample: string
  /** `Retry-After` of the main document, when it had one. */
  retryAfter?: string
}

/** Why a browser search gave no page. */
export interface BrowserSearchFailure {
  ok: false
  /** `crashed`: the browser went away (it is replaced on the next search). */
  kind: 'timeout' | 'cancelled' | 'crashed' | 'navigation' | 'launch'
  message: string
}

/** Hold on a browser taken by one user (a session); {@link BrowserLease.release} gives it back. */
export interface BrowserLease {
  release(): Promise<void>
}

/**
 * A headless browser that renders search engines' result pages: the `web_search` browser tier.
 * Implemented on Node by `playwrightBrowser()` from `isoagent/playwright`; absent elsewhere.
 * The browser starts on the first search, is shared by every session holding a lease, and
 * closes when the last lease is released (or after it has been idle).
 */
export interface HeadlessBrowser {
  /** Render `request.url` and extract its results. Never throws: failures are values. */
  search(request: BrowserSearchRequest): Promise<BrowserSearchPage | BrowserSearchFailure>
  /** Take a lease (a session that may search); the browser closes when none is held. */
  acquire(): BrowserLease
  /** Most searches the browser runs at once (its bounded pages). */
  readonly maxPages: number
}
