// The web demo's "server" mode in Chromium: the same UI over the HTTP API of the `isoagent
// serve` that served it (a local-disk workspace, so bash appears), with an ask rule.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { fillEditor, useDemo } from './demo-harness.ts'

let page: Page
const dir = mkdtempSync(join(tmpdir(), 'isoagent-demo-server-'))
writeFileSync(join(dir, 'README.md'), '# served from disk\n')
writeFileSync(join(dir, 'victim.txt'), 'do not delete\n')

// The URL the banner prints, without `&mode=`: a served demo opens in server mode.
const demo = useDemo({
  args: ['--workspace', dir, '--ask', 'bash(rm *)'],
  mode: 'server',
  modeInUrl: false,
  cleanup: () => rmSync(dir, { recursive: true, force: true }),
})
beforeAll(() => void ({ page } = demo))

async function bash(command: string): Promise<void> {
  await page.click('#tab-console')
  await page.selectOption('#console-tool', 'bash')
  await page.fill('#arg-bash-command', command)
  await page.click('#console-run')
}

describe('web demo, server mode (Chromium)', () => {
  it('serves the demo and its files without a token, with their content types', async () => {
    const index = await fetch(`${demo.server.url}/`)
    expect(index.status).toBe(200)
    expect(index.headers.get('content-type')).toMatch(/^text\/html/)
    const html = await index.text()
    expect(html).toContain('<title>isoagent web demo</title>')
    const script = /src="\.\/(assets\/index-[^"]+\.js)"/.exec(html)![1]!
    const js = await fetch(`${demo.server.url}/${script}`)
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/)
    const wasmName = readdirSync(join(import.meta.dirname, '../../dist/web-demo/assets')).find(
      (f) => f.endsWith('.wasm'),
    )!
    const wasm = await fetch(`${demo.server.url}/assets/${wasmName}`)
    expect(wasm.status).toBe(200)
    expect(wasm.headers.get('content-type')).toBe('application/wasm')
    expect((await wasm.arrayBuffer()).byteLength).toBeGreaterThan(100_000)
    // The API keeps its token; a path outside the build is not served.
    expect((await fetch(`${demo.server.url}/v1/sessions`, { method: 'POST' })).status).toBe(401)
    expect((await fetch(`${demo.server.url}/assets/%2e%2e/%2e%2e/package.json`)).status).toBe(401)
    expect((await fetch(`${demo.server.url}/assets/nothing.js`)).status).toBe(401)
  })

  it('lists bash among the tools and shows the server workspace', async () => {
    const tools = await page.$$eval('#tool-list li', (items) => items.map((i) => i.textContent))
    expect(tools).toContain('bash')
    expect(await page.textContent('#status')).toContain('server 127.0.0.1')
    await page.waitForSelector('.tree-file[data-path="README.md"]')
  })

  it('streams a command’s output into the timeline while it runs', async () => {
    await bash('for i in 1 2 3; do echo tick-$i; sleep 0.4; done')
    const call = page.locator('#timeline li[data-tool="bash"]').first()
    await call.locator('.delta:has-text("tick-1")').waitFor({ timeout: 10_000 })
    // tick-1 arrived before the call ended: it was streamed, not shown with the result.
    expect(await call.getAttribute('class')).toContain('running')
    await call.locator('.call-state:has-text("completed")').waitFor({ timeout: 10_000 })
    expect(await call.locator('.delta').textContent()).toContain('tick-3')
    expect(await call.locator('.call-state').textContent()).toMatch(/completed in \d+ ms/)
    await page.waitForSelector('#console-result .result.ok')
  })

  it('asks before a call an ask rule names: refusing fails it, approving runs it', async () => {
    await bash('rm victim.txt')
    await page.waitForSelector('#confirm-dialog[open]')
    expect(await page.textContent('#confirm-dialog')).toContain('rm victim.txt')
    await page.click('#confirm-refuse')
    const refused = await page.waitForSelector('#console-result .result.failed')
    expect(await refused.getAttribute('data-error-kind')).toBe('permission_denied')
    expect(existsSync(join(dir, 'victim.txt'))).toBe(true)
    expect(await page.isVisible('#confirm-dialog')).toBe(false)

    await bash('rm victim.txt')
    await page.waitForSelector('#confirm-dialog[open]')
    await page.click('#confirm-approve')
    await page.waitForSelector('#console-result .result.ok')
    expect(existsSync(join(dir, 'victim.txt'))).toBe(false)
  })

  it('edits a file on disk through the same panels', async () => {
    await page.click('.tree-file[data-path="README.md"]')
    await page.waitForFunction(
      () => document.getElementById('file-title')?.textContent === 'README.md',
    )
    await page.waitForSelector('#editor[data-path="README.md"]')
    await fillEditor(page, '# served from disk, edited in the page')
    await page.click('#review')
    await page.waitForSelector('#merge-view .cm-mergeView')
    await page.click('#apply')
    await page.waitForSelector('#diff-after .diff')
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe(
      '# served from disk, edited in the page\n',
    )
  })

  it('switches to the in-tab workspace and back', async () => {
    await page.check('#mode-tab')
    await page.waitForSelector('body[data-ready="tab"]')
    expect(await page.$$eval('#tool-list li', (l) => l.map((i) => i.textContent))).not.toContain(
      'bash',
    )
    await page.check('#mode-server')
    await page.waitForSelector('body[data-ready="server"]')
    expect(await page.$$eval('#tool-list li', (l) => l.map((i) => i.textContent))).toContain('bash')
  })

  it('logged no console error and no page error', () => {
    expect(demo.errors).toEqual([])
  })
})
