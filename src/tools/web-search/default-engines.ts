import type { EngineConfig } from './engine-config.ts'

/** A generic captcha/consent wall selector, used when an engine names none. */
export const DEFAULT_WALL_SELECTOR =
  'form[action*="captcha" i], #captcha, .g-recaptcha, iframe[src*="recaptcha"], iframe[src*="hcaptcha"], form[action*="consent" i], #challenge-form'

/**
 * The engines a session searches when `webSearch.engines` is not given: public results pages
 * rendered by the browser tier (where a browser is configured), an HTML page and an RSS feed for
 * the HTTP tier, and Brave's JSON API (used only with `apiKeys.brave`). Copy and change any
 * entry (its `url` is its base URL) and pass the list as `webSearch.engines`.
 */
export const DEFAULT_ENGINES: readonly EngineConfig[] = [
  {
    name: 'google',
    kind: 'browser',
    url: 'https://www.google.com/search?q={query}&num={limit}&hl=en',
    selectors: {
      result: '#search div.g',
      title: 'h3',
      url: 'a[href]',
      snippet: '[data-sncf], .VwiC3b',
    },
  },
  {
    name: 'bing',
    kind: 'browser',
    url: 'https://www.bing.com/search?q={query}&count={limit}',
    selectors: {
      result: '#b_results > li.b_algo',
      title: 'h2',
      url: 'h2 a[href]',
      snippet: 'p',
      skip: '.b_ad, .b_adTop',
    },
  },
  {
    name: 'duckduckgo',
    kind: 'html',
    url: 'https://html.duckduckgo.com/html/?q={query}',
    selectors: {
      result: '.result',
      title: '.result__a',
      url: '.result__a',
      snippet: '.result__snippet',
      skip: '.result--ad',
    },
  },
  { name: 'bing_rss', kind: 'rss', url: 'https://www.bing.com/search?format=rss&q={query}' },
  {
    name: 'brave',
    kind: 'json',
    url: 'https://api.search.brave.com/res/v1/web/search?q={query}&count={limit}',
    headers: { accept: 'application/json', 'x-subscription-token': '{key}' },
    fields: { results: 'web.results', title: 'title', url: 'url', snippet: 'description' },
  },
]

/** A SearXNG instance's JSON API at `baseUrl` (e.g. `https://searx.example.org`). */
export function searxngEngine(baseUrl: string, name = 'searxng'): EngineConfig {
  return {
    name,
    kind: 'json',
    url: `${baseUrl.replace(/\/+$/, '')}/search?q={query}&format=json`,
    fields: { results: 'results', title: 'title', url: 'url', snippet: 'content' },
  }
}
