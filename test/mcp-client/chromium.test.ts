// The MCP client in Chromium: a session over a browser workspace (IndexedDB) connects to an SDK
// server on another loopback origin over Streamable HTTP (the server answers CORS) and gets the
// same names, status and results as the same scenario in Node over a memory workspace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryWorkspace } from '../../adapters/index.ts'
import { openChromiumPage, type ChromiumPage } from './chromium-harness.ts'
import { streamableServer, type LoopbackMcp } from './http-servers.ts'
import { runMcpScenario, type McpScenarioRecord } from './mcp-scenario.ts'
import { toolServer } from './fixtures/tool-server.mjs'

let mcp: LoopbackMcp
let page: ChromiumPage
beforeAll(async () => {
  mcp = await streamableServer(() => toolServer(), { cors: true })
  page = await openChromiumPage('test/mcp-client/chromium-page.ts')
}, 120_000)
afterAll(async () => {
  await page?.close()
  await mcp?.close()
})

describe('MCP client in Chromium', () => {
  it('gives the same names, status and results as in Node', async () => {
    const inPage = await page.call<McpScenarioRecord>('mcp', mcp.url)
    const inNode = await runMcpScenario(memoryWorkspace({}), mcp.url)
    expect(page.errors).toEqual([])
    expect(inPage.status).toEqual([{ name: 'srv', connected: true, toolCount: 12 }])
    expect(inPage.results[0]).toEqual({
      tool: 'mcp__srv__echo',
      exitCode: 0,
      output: 'echo: hello',
    })
    expect(inPage.results[2]!.output).toMatch(/\[Image: image\/png, \d+ bytes, artifact: /)
    expect(inPage.results[4]).toMatchObject({ exitCode: 1, output: 'it broke' })
    expect(inPage.results[6]!.exitCode).toBe(1)
    expect(inPage.written).toContain('echo: to disk')
    expect(inPage).toEqual(inNode)
    // Both sessions reached the server from their own MCP session (page's across origins).
    expect(mcp.servers.length).toBeGreaterThanOrEqual(2)
  }, 60_000)
})
