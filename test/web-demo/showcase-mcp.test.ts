// The MCP servers panel in server mode (Chromium, the built demo and the built `isoagent serve
// --mcp-config`): a stdio MCP server built with the SDK's McpServer (the MCP client tests'
// fixture) is listed with the tools it publishes, and an unannotated tool of it asks before it
// runs while a read-only, closed-world one does not.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { useDemo } from './demo-harness.ts'
import { governedCall, governedResult, showPanel } from './showcase-helpers.ts'

const script = fileURLToPath(new URL('../mcp-client/fixtures/stdio-server.mjs', import.meta.url))
let page: Page
const dir = mkdtempSync(join(tmpdir(), 'isoagent-demo-showcase-mcp-'))
writeFileSync(
  join(dir, 'mcp.json'),
  JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [script] } } }),
)

const demo = useDemo({
  args: ['--workspace', dir, '--mcp-config', join(dir, 'mcp.json')],
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

  it('logged no console or page error but the refused request', () => {
    // Chromium logs every 4xx answer of fetch; the 422 of the refused add is the one expected.
    const refused = /Failed to load resource: .*status of 422/
    expect(demo.errors.filter((e) => refused.test(e))).toHaveLength(1)
    expect(demo.errors.filter((e) => !refused.test(e))).toEqual([])
  })
})
