// Loopback fake search engines: pages whose results a script inserts, plain HTML pages, RSS and
// Atom feeds, a JSON API, walls, rate limits, 5xx, slow answers and garbage. Every request is
// recorded (path and, for the browser tier, what the page tried to load).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FakeEngines {
  /** `http://127.0.0.1:<port>` */
  base: string
  /** The same server under another origin (`http://localhost:<port>`), for cross-origin loads. */
  otherOrigin: string
  /** Requests seen, as `path?query`. */
  hits: string[]
  count(path: string): number
  /** Answer `path` with `delayMs` of delay from now on (0: none). */
  setDelay(path: string, delayMs: number): void
  close(): Promise<void>
}

const RESULTS = [
  { title: 'Alpha docs', url: 'https://alpha.example/docs', snippet: 'Alpha is the first.' },
  { title: 'Beta guide', url: 'https://beta.example/guide', snippet: 'Beta explains.' },
  { title: 'Gamma notes', url: 'https://gamma.example/notes', snippet: 'Gamma notes it.' },
  { title: 'Delta page', url: 'https://delta.example/', snippet: 'Delta page.' },
]

const escape = (s: string) =>
  s
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')

function resultsHtml(query: string, offset = 0): string {
  const items = RESULTS.slice(offset).map(
    (r) =>
      `<div class="result"><a class="title" href="${escape(r.url)}?utm_source=x#frag">${escape(r.title)} ${escape(query)}</a><p class="snippet">${escape(r.snippet)}</p></div>`,
  )
  return items.join('\n')
}

function page(body: string, head = ''): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>fake</title>${head}</head><body>${body}</body></html>`
}

function scriptPage(otherOrigin: string): string {
  return page(
    `<div id="results"></div><img src="/pixel.png"><img src="${otherOrigin}/cross.png">`,
    `<link rel="stylesheet" href="/style.css"><script src="/results.js"></script><script src="${otherOrigin}/cross.js"></script>`,
  )
}

const RESULTS_JS = `
addEventListener('DOMContentLoaded', async () => {
  const q = new URLSearchParams(location.search).get('q') || ''
  const data = await (await fetch('/data.json?q=' + encodeURIComponent(q))).json()
  setTimeout(() => {
    document.getElementById('results').innerHTML = data.map((r) =>
      '<div class="result"><a class="title" href="' + r.url + '">' + r.title + '</a><p class="snippet">' + r.snippet + '</p></div>'
    ).join('') + '<div class="result ad"><a class="title" href="https://ads.example/buy">Buy now</a></div>'
  }, 30)
})
`

function rss(query: string): string {
  const items = RESULTS.map(
    (r) =>
      `<item><title><![CDATA[${r.title} <b>${query}</b>]]></title><link>${r.url}</link><description>${escape(r.snippet)}</description></item>`,
  ).join('')
  return `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>fake feed</title><link>http://fake/</link>${items}</channel></rss>`
}

function atom(): string {
  const entries = RESULTS.map(
    (r) =>
      `<entry><title>${escape(r.title)}</title><link rel="alternate" href="${r.url}"/><summary>${escape(r.snippet)}</summary></entry>`,
  ).join('')
  return `<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>fake</title>${entries}</feed>`
}

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void

export async function startFakeEngines(): Promise<FakeEngines> {
  const hits: string[] = []
  const delays = new Map<string, number>()
  let otherOrigin = ''
  const send = (res: ServerResponse, status: number, type: string, body: string, extra = {}) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...extra })
    res.end(body)
  }
  const html = (res: ServerResponse, body: string, status = 200, extra = {}) =>
    send(res, status, 'text/html; charset=utf-8', body, extra)
  const q = (url: URL) => url.searchParams.get('q') ?? ''
  const routes: Record<string, Handler> = {
    '/script': (_req, res) => html(res, scriptPage(otherOrigin)),
    '/results.js': (_req, res) => send(res, 200, 'text/javascript', RESULTS_JS),
    '/data.json': (_req, res, url) =>
      send(
        res,
        200,
        'application/json',
        JSON.stringify(RESULTS.map((r) => ({ ...r, title: `${r.title} ${q(url)}` }))),
      ),
    '/html': (_req, res, url) =>
      html(
        res,
        page(
          `<div class="result ad"><a class="title" href="https://ads.example/x">Sponsored</a></div>` +
            `<div class="result"><a class="title" href="/url?q=${encodeURIComponent('https://alpha.example/docs')}&sa=U">Alpha again</a></div>` +
            resultsHtml(q(url)) +
            `<div class="result"><a class="title" href="javascript:alert(1)">Bad link</a></div>` +
            `<div class="result"><a class="title" href="https://empty-title.example/"></a></div>`,
        ),
      ),
    '/html-one': (_req, res, url) => html(res, page(resultsHtml(q(url), 3))),
    '/empty': (_req, res) => html(res, page('<p>No results found.</p>')),
    '/rss': (_req, res, url) => send(res, 200, 'application/rss+xml', rss(q(url))),
    '/atom': (_req, res) => send(res, 200, 'application/atom+xml', atom()),
    '/api': (req, res, url) => {
      if (req.headers['x-api-key'] !== 'secret-key')
        return send(res, 401, 'application/json', '{"error":"bad key"}')
      send(
        res,
        200,
        'application/json',
        JSON.stringify({
          data: {
            items: RESULTS.map((r) => ({
              name: `${r.title} ${q(url)}`,
              link: r.url,
              text: r.snippet,
            })),
          },
        }),
      )
    },
    '/api-echo-url': (req, res) =>
      send(
        res,
        200,
        'application/json',
        JSON.stringify({
          data: {
            items: RESULTS.map((r) => ({ name: r.title, link: r.url, text: `asked ${req.url}` })),
          },
        }),
      ),
    '/api-echo': (req, res) =>
      send(
        res,
        200,
        'application/json',
        JSON.stringify({
          data: {
            items: RESULTS.map((r) => ({
              name: r.title,
              link: r.url,
              text: `your key is ${String(req.headers['x-api-key'])}`,
            })),
          },
        }),
      ),
    '/api-quota': (_req, res) => send(res, 402, 'application/json', '{"error":"quota"}'),
    '/captcha': (_req, res) =>
      html(
        res,
        page(
          '<h1>Our systems have detected unusual traffic</h1><form action="/captcha-check"><div class="g-recaptcha"></div></form>',
        ),
      ),
    '/consent': (_req, res) =>
      html(
        res,
        page(
          '<h1>Before you continue</h1><form action="/consent/save"><button>Accept all</button></form>',
        ),
      ),
    '/429': (_req, res) => html(res, page('slow down'), 429, { 'retry-after': '120' }),
    '/500': (_req, res) => html(res, page('oops'), 500),
    '/slow': (_req, res, url) => {
      const t = setTimeout(() => html(res, page(resultsHtml(q(url)))), 8_000)
      res.on('close', () => clearTimeout(t))
    },
    '/garbage': (_req, res) =>
      send(res, 200, 'application/octet-stream', '\u0000\u0001\u0002{"results":'),
    '/not-json': (_req, res) => send(res, 200, 'application/json', '<html>nope</html>'),
  }
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    hits.push(`${url.pathname}${url.search}`)
    const handler = routes[url.pathname]
    const run = () => (handler ? handler(req, res, url) : send(res, 404, 'text/plain', 'not found'))
    const delay = delays.get(url.pathname) ?? 0
    if (delay > 0) setTimeout(run, delay)
    else run()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  otherOrigin = `http://localhost:${port}`
  return {
    base: `http://127.0.0.1:${port}`,
    otherOrigin,
    hits,
    count: (path) => hits.filter((h) => h === path || h.startsWith(`${path}?`)).length,
    setDelay: (path, ms) => delays.set(path, ms),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
