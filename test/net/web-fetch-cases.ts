import { expect, it } from 'vitest'
import type { TestServer } from './http-fixture.ts'

/** A ToolResult as JSON (what a Worker answers). */
export interface ResultJson {
  output: string
  exitCode: number
  metadata?: Record<string, unknown>
  errorKind?: { type: string; [key: string]: unknown }
}

export type CallWebFetch = (args: Record<string, unknown>) => Promise<ResultJson>

export const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Fixture</title></head>
<body>
<nav class="site-nav"><a href="/">Home</a> <a href="/about">About us</a></nav>
<header><p>Site banner text</p></header>
<main>
<h1>Fixture title</h1>
<p>Read the <a href="guide/next.html">next chapter</a>, the <a href="/abs">absolute one</a> and
<a href="https://other.example/x">another site</a>.</p>
<p><img src="img/diagram.png" alt="diagram"></p>
<table><thead><tr><th>Name</th><th>Value</th></tr></thead>
<tbody><tr><td>alpha</td><td>1</td></tr><tr><td>beta</td><td>2</td></tr></tbody></table>
<pre><code class="language-ts">const answer: number = 42
console.log(answer)</code></pre>
<div class="share-buttons">Share this page</div>
</main>
<aside>Sidebar links</aside>
<footer>Copyright footer</footer>
</body></html>`

/** Bytes of `text` in ISO-8859-1. */
function latin1(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0))
}

// 日本語のページ in Shift_JIS.
const SJIS_TEXT = new Uint8Array([
  0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea, 0x82, 0xcc, 0x83, 0x79, 0x81, 0x5b, 0x83, 0x57,
])

export const LONG_TEXT = Array.from(
  { length: 3000 },
  (_, i) => `line ${i} — ünïcödé 𝄞 ${'x'.repeat(i % 37)}`,
).join('\n')

/** Routes every web_fetch suite serves. */
export function serveFixtures(server: TestServer): void {
  server.route('/docs/page.html', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(PAGE)
  })
  server.route('/latin1', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=ISO-8859-1' })
    res.end(
      latin1('<html><body><main><p>caf\u00e9 cr\u00e8me br\u00fbl\u00e9e</p></main></body></html>'),
    )
  })
  server.route('/sjis', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(
      new Uint8Array([
        ...new TextEncoder().encode('<html><head><meta charset="Shift_JIS"></head><body><p>'),
        ...SJIS_TEXT,
        ...new TextEncoder().encode('</p></body></html>'),
      ]),
    )
  })
  server.route('/sjis-header', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=shift_jis' })
    res.end(SJIS_TEXT)
  })
  server.route('/long.txt', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
    res.end(LONG_TEXT)
  })
  server.route('/huge.txt', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    const chunk = new TextEncoder().encode('y'.repeat(1024 * 1024))
    for (let i = 0; i < 6; i++) res.write(chunk)
    res.end()
  })
  server.route('/status/500', (_req, res) => {
    res.writeHead(500)
    res.end('boom')
  })
  server.route('/status/503', (_req, res) => {
    res.writeHead(503)
    res.end('down')
  })
  server.route('/status/408', (_req, res) => {
    res.writeHead(408)
    res.end()
  })
  server.route('/status/429', (_req, res) => {
    res.writeHead(429, { 'retry-after': '7' })
    res.end()
  })
  server.route('/status/404', (_req, res) => {
    res.writeHead(404)
    res.end()
  })
  server.route('/hang', () => {
    // never answers
  })
  server.route('/reset', (req) => {
    req.socket.destroy()
  })
  server.route('/redirect', (_req, res) => {
    res.writeHead(301, { location: '/docs/page.html' })
    res.end()
  })
  server.route('/stall', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.write('the first bytes, then nothing')
  })
  server.route('/signed', (_req, res) => {
    res.writeHead(302, { location: '/docs/page.html?X-Amz-Signature=SECRETSIG&X-Amz-Expires=60' })
    res.end()
  })
  server.route('/binary', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' })
    res.end(new Uint8Array([0, 1, 2]))
  })
}

function strip(output: string): string {
  return output.replace(/\n\n\[web_fetch: \d+ more characters; continue with offset=\d+\]$/, '')
}

/** The web_fetch cases, run on each runtime through `call`. */
export function webFetchCases(call: CallWebFetch, server: () => TestServer): void {
  const url = (path: string) => server().url(path)

  it('markdown keeps tables and code blocks and makes links absolute', async () => {
    const r = await call({ url: url('/docs/page.html') })
    expect(r.errorKind).toBeUndefined()
    const o = r.output
    expect(o).toContain('# Fixture title')
    expect(o).toMatch(/\| Name\s*\| Value \|/)
    expect(o).toMatch(/\| alpha\s*\| 1\s*\|/)
    expect(o).toContain('```ts\nconst answer: number = 42\nconsole.log(answer)\n```')
    expect(o).toContain(`[next chapter](${url('/docs/guide/next.html')})`)
    expect(o).toContain(`[absolute one](${url('/abs')})`)
    expect(o).toContain('[another site](https://other.example/x)')
    expect(o).toContain(`![diagram](${url('/docs/img/diagram.png')})`)
    expect(o).toContain('Site banner text')
    expect(r.metadata).toMatchObject({
      status: 200,
      content_type: 'text/html',
      charset: 'utf-8',
      format: 'markdown',
      next_offset: null,
      truncated: false,
    })
  })

  it('body_only drops navigation, header, footer, aside and boilerplate', async () => {
    const r = await call({ url: url('/docs/page.html'), body_only: true })
    expect(r.exitCode).toBe(0)
    expect(r.output).toContain('# Fixture title')
    expect(r.output).toMatch(/\| beta\s*\| 2\s*\|/)
    for (const gone of [
      'About us',
      'Site banner text',
      'Sidebar links',
      'Copyright footer',
      'Share this page',
    ])
      expect(r.output).not.toContain(gone)
  })

  it('text format gives readable text without markup', async () => {
    const r = await call({ url: url('/docs/page.html'), format: 'text', body_only: true })
    expect(r.exitCode).toBe(0)
    expect(r.output).toContain('Fixture title')
    expect(r.output).toContain('const answer: number = 42')
    expect(r.output).not.toMatch(/<[a-z]/)
    expect(r.output).not.toContain('Copyright footer')
  })

  it('html format returns the page with absolute links', async () => {
    const r = await call({ url: url('/docs/page.html'), format: 'html' })
    expect(r.exitCode).toBe(0)
    expect(r.output).toContain('<table>')
    expect(r.output).toContain(`href="${url('/docs/guide/next.html')}"`)
    expect(r.output).toContain('<footer>')
  })

  it('follows redirects and reports the final URL', async () => {
    const r = await call({ url: url('/redirect') })
    expect(r.exitCode).toBe(0)
    expect(r.metadata?.url).toBe(url('/docs/page.html'))
    expect(r.metadata?.redirects).toBe(1)
  })

  it('decodes Latin-1 named by the Content-Type header', async () => {
    const r = await call({ url: url('/latin1') })
    expect(r.exitCode).toBe(0)
    expect(r.output).toContain('café crème brûlée')
    expect(r.metadata?.charset).toBe('windows-1252')
  })

  it('decodes Shift_JIS named by <meta charset>', async () => {
    const r = await call({ url: url('/sjis') })
    expect(r.exitCode).toBe(0)
    expect(r.output).toContain('日本語のページ')
    expect(r.metadata?.charset).toBe('shift_jis')
  })

  it('decodes Shift_JIS named by the header for plain text', async () => {
    const r = await call({ url: url('/sjis-header') })
    expect(r.exitCode).toBe(0)
    expect(r.output).toBe('日本語のページ')
  })

  it('continuation with offset and max_chars joins exactly', async () => {
    const parts: string[] = []
    let offset: number | null = 0
    let calls = 0
    while (offset !== null) {
      const r: ResultJson = await call({ url: url('/long.txt'), offset, max_chars: 7777 })
      expect(r.exitCode).toBe(0)
      parts.push(strip(r.output))
      const next = r.metadata?.next_offset as number | null
      if (next !== null) expect(r.output).toContain(`continue with offset=${next}`)
      offset = next
      calls++
    }
    expect(calls).toBeGreaterThan(5)
    expect(parts.join('')).toBe(LONG_TEXT)
  })

  it('reads at most 5 MB of a body', async () => {
    const r = await call({ url: url('/huge.txt'), max_chars: 10 })
    expect(r.exitCode).toBe(0)
    expect(r.metadata).toMatchObject({
      body_bytes: 5 * 1024 * 1024,
      body_truncated: true,
      total_chars: 5 * 1024 * 1024,
    })
  })

  for (const [path, type] of [
    ['/status/500', 'transport'],
    ['/status/503', 'transport'],
    ['/status/408', 'transport'],
    ['/status/404', 'not_found'],
    ['/reset', 'transport'],
    ['/binary', 'unsupported'],
  ] as const) {
    it(`${path} fails typed as ${type}`, async () => {
      const r = await call({ url: url(path) })
      expect(r.exitCode).toBe(1)
      expect(r.errorKind?.type).toBe(type)
    })
  }

  it('429 fails as rate_limited with the parsed Retry-After', async () => {
    const r = await call({ url: url('/status/429') })
    expect(r.exitCode).toBe(1)
    expect(r.errorKind).toEqual({ type: 'rate_limited', retry_after_ms: 7000 })
  })

  it('a server that never answers fails as timeout', async () => {
    const started = Date.now()
    const r = await call({ url: url('/hang'), timeout: 0.5 })
    expect(r.exitCode).toBe(1)
    expect(r.errorKind).toMatchObject({ type: 'timeout', duration_ms: 500 })
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it('a body that stalls past the deadline fails as timeout', async () => {
    const r = await call({ url: url('/stall'), timeout: 0.5 })
    expect(r.exitCode).toBe(1)
    expect(r.errorKind?.type).toBe('timeout')
  })

  it('never shows a signed query string in metadata or messages', async () => {
    const r = await call({ url: url('/signed') })
    expect(r.exitCode).toBe(0)
    expect(JSON.stringify(r.metadata)).not.toContain('SECRETSIG')
    expect(r.metadata?.url).toBe(
      url('/docs/page.html') + '?X-Amz-Signature=REDACTED&X-Amz-Expires=REDACTED',
    )
    const late = await call({ url: url('/hang?sig=SECRETSIG'), timeout: 0.5 })
    expect(JSON.stringify(late)).not.toContain('SECRETSIG')
  })

  it('a private address not on allowHosts is refused', async () => {
    const r = await call({ url: url('/docs/page.html').replace('127.0.0.1', '127.0.0.2') })
    expect(r.exitCode).toBe(1)
    expect(r.errorKind?.type).toBe('permission_denied')
  })

  it('bad arguments are typed failures', async () => {
    for (const args of [
      { url: 'ftp://example.com/' },
      { url: url('/docs/page.html'), max_chars: 100_001 },
      { url: url('/docs/page.html'), format: 'pdf' },
      { url: url('/docs/page.html'), timeout: 121 },
      { url: url('/docs/page.html'), extra: 1 },
    ]) {
      const r = await call(args)
      expect(r.exitCode).toBe(1)
      expect(r.errorKind?.type).toBe('invalid_argument')
    }
  })
}
