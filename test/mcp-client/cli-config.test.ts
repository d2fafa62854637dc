// The CLI's MCP config: `--mcp-config FILE` and `./.mcp.json` for `isoagent mcp` (and serve),
// through `isoagent mcp` in process: a desktop-style client sees and calls the proxied tools.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { mcpMain } from '../../bin/mcp.ts'
import { readMcpConfig } from '../../bin/mcp-config.ts'

const script = fileURLToPath(new URL('./fixtures/stdio-server.mjs', import.meta.url))
let dir: string

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'isoagent-mcp-cli-'))
  writeFileSync(
    join(dir, '.mcp.json'),
    JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [script] } } }),
  )
  writeFileSync(join(dir, 'broken.json'), '{ "mcpServers": { "a__b": { "command": "x" } } }')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('readMcpConfig', () => {
  it('reads ./.mcp.json when present, a named file, and refuses bad ones', () => {
    expect(readMcpConfig(undefined, dir)?.fx).toMatchObject({ transport: 'stdio' })
    expect(readMcpConfig(undefined, tmpdir() + '/does-not-exist-dir')).toBeUndefined()
    expect(() => readMcpConfig('broken.json', dir)).toThrow(/broken\.json.*__/)
    expect(() => readMcpConfig('missing.json', dir)).toThrow(/cannot read/)
  })
})

describe('isoagent mcp --mcp-config', () => {
  it('serves the MCP servers tools beside its own', async () => {
    const input = new PassThrough()
    const output = new PassThrough()
    const err = new PassThrough()
    const lines: Record<string, unknown>[] = []
    let buffer = ''
    output.on('data', (chunk: Buffer) => {
      buffer += chunk.toString()
      let i
      while ((i = buffer.indexOf('\n')) >= 0) {
        lines.push(JSON.parse(buffer.slice(0, i)) as Record<string, unknown>)
        buffer = buffer.slice(i + 1)
      }
    })
    const answer = async (id: number) => {
      await expect.poll(() => lines.find((l) => l.id === id), { timeout: 20_000 }).toBeTruthy()
      return lines.find((l) => l.id === id)!.result as Record<string, unknown>
    }
    const send = (m: unknown) => input.write(JSON.stringify(m) + '\n')
    const done = mcpMain(
      ['--workspace', dir, '--mcp-config', join(dir, '.mcp.json')],
      input,
      output,
      err,
    )
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 't', version: '1' },
      },
    })
    await answer(1)
    send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} })
    const list = (await answer(2)).tools as { name: string }[]
    expect(list.map((t) => t.name)).toEqual(expect.arrayContaining(['read', 'mcp__fx__echo']))
    send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'mcp__fx__peek', arguments: { key: 'cli' } },
    })
    const called = await answer(3)
    expect(JSON.stringify(called.content)).toContain('value of cli')
    // mcpMain ends its process 2 s after returning (as the CLI does): not this test's process.
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never)
    input.end()
    expect(await done).toBe(0)
    await new Promise((r) => setTimeout(r, 2200))
    exit.mockRestore()
  }, 60_000)
})
