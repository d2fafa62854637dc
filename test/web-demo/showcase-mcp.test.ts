// The MCP servers panel in server mode (Chromium, the built demo and the built `isoagent serve
// --mcp-config`): a stdio MCP server built with the SDK's McpServer (the MCP client tests'
// fixture) is listed with the tools it publishes, and an unannotated tool of it asks before it
// runs while a read-only, closed-world one does not.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toolServer } from '../mcp-client/fixtures/tool-server.mjs'
import { streamableServer, type LoopbackMcp } from '../mcp-client/http-servers.ts'
import { useDemo } from './demo-harness.ts'
import { governedCall, governedResult, showPanel } from './showcase-helpers.ts'

const script = fileURLToPath(new URL('../mcp-client/fixtures/stdio-server.mjs', import.meta.url))
let page: Page
const dir = mkdtempSync(join(tmpdir(), 'isoagent-demo-showcase-mcp-'))
writeFileSync(
  join(dir, 'mcp.json'),
  JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [script] } } }),
)

// An HTTP MCP server (the SDK's McpServer over Streamable HTTP) on loopback, which the
// server is told to allow (--net-allow-host): the user adds it from the panel.
let http: LoopbackMcp
beforeAll(async () => {
  http = await streamableServer(() => toolServer())
})
afterAll(() => http?.close())

const demo = useDemo({
  args: () => [
    '--workspace',
    dir,
    '--mcp-config',
    join(dir, 'mcp.json'),
    '--net-allow-host',
    new URL(http.url).host,
  ],
  mode: 'server',
  cleanup: () => rmSync(dir, { recursive: true, force: true }),
})
beforeAll(() => void ({ page } = demo))

describe('MCP servers panel, server mode (Chromium)', () => {
  it('lists the configured server and the tools it publishes', async () => {
    await showPanel(page, 'mcp')
    const fx = page.locator('#mcp-list li.mcp-server[data-server="fx"]')
    await fx.waitFor()
    expect(await fx.textContent()).toContain('(stdio) connected')
    const tools = await fx
      .locator('li[data-tool]')
      .evaluateAll((items) => items.map((i) => i.getAttribute('data-tool')))
    expect(tools).toEqual(expect.arrayContaining(['mcp__fx__echo', 'mcp__fx__peek']))
  })

  it('an unannotated MCP tool asks first; a read-only closed-world one runs', async () => {
    await governedCall(page, 'mcp__fx__echo', { text: 'from the demo' })
    await page.waitForSelector('#confirm-dialog[open]')
    await page.click('#confirm-approve')
    expect(await governedResult(page)).toBe('')
    expect(await page.textContent('#gov-result .output')).toContain('echo: from the demo')

    await governedCall(page, 'mcp__fx__peek', { key: 'k' })
    expect(await governedResult(page)).toBe('')
    expect(await page.textContent('#gov-result .output')).toContain('value of k')
    expect(await page.$('#confirm-dialog[open]')).toBeNull()
  })

  it('refuses a loopback URL for an added HTTP server, with the server’s reason', async () => {
    await showPanel(page, 'mcp')
    await page.fill('#mcp-name', 'local')
    await page.fill('#mcp-url', `${demo.server.url}/mcp`)
    await page.click('#mcp-add')
    await page.waitForSelector('#mcp-result:has-text("Refused")')
    expect(await page.textContent('#mcp-result')).toMatch(/Refused \((400|422) /)
  })

  it('adds a working HTTP server from the panel and calls its tool from the tool console', async () => {
    await showPanel(page, 'mcp')
    await page.fill('#mcp-name', 'web')
    await page.fill('#mcp-url', http.url)
    await page.click('#mcp-add')
    await page.waitForSelector('#mcp-result:has-text("Added web")')
    const web = page.locator('#mcp-list li.mcp-server[data-server="web"]')
    await web.waitFor()
    expect(await web.textContent()).toContain('(http) connected')
    expect(await web.locator('li[data-tool="mcp__web__echo"]').count()).toBe(1)

    // The tool console lists the new tools without a reload; echo is unannotated, so it asks.
    await page.click('#tab-console')
    await page.waitForSelector('#tool-list li[data-tool="mcp__web__echo"]')
    await page.selectOption('#console-tool', 'mcp__web__echo')
    await page.fill('#arg-mcp__web__echo-text', 'over loopback HTTP')
    await page.click('#console-run')
    await page.waitForSelector('#confirm-dialog[open]')
    await page.click('#confirm-approve')
    await page.waitForSelector('#console-result .result.ok')
    expect(await page.textContent('#console-result .output')).toContain('echo: over loopback HTTP')
    // The call reached the SDK server the test started, and shows in the timeline.
    expect(http.servers.length).toBeGreaterThan(0)
    await page
      .locator('#timeline li[data-tool="mcp__web__echo"] .call-state:has-text("completed")')
      .waitFor()
  })

  it('logged no console or page error but the refused request', () => {
    // Chromium logs every 4xx answer of fetch; the 422 of the refused add is the one expected.
    const refused = /Failed to load resource: .*status of 422/
    expect(demo.errors.filter((e) => refused.test(e))).toHaveLength(1)
    expect(demo.errors.filter((e) => !refused.test(e))).toEqual([])
  })
})
