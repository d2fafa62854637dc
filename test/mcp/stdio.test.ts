import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'

const bin = fileURLToPath(new URL('../../bin/isoagent.mjs', import.meta.url))
let dir: string
let client: Client
let transport: StdioClientTransport
let stderr = ''
const SKILL_MD =
  '---\nname: stdio-skill\ndescription: Read over stdio\ndisable-model-invocation: true\n---\nSteps.\n'

const call = async (name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult
const text = (result: CallToolResult) =>
  result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')

beforeAll(async () => {
  if (!existsSync(new URL('../../dist/bin/mcp.js', import.meta.url)))
    throw new Error('dist/ is stale or missing: run `npm run build` first')
  dir = mkdtempSync(join(tmpdir(), 'isoagent-mcp-'))
  writeFileSync(join(dir, 'a.txt'), 'alpha\nbeta\n')
  // A skill the model may not invoke (listed as a resource, adds no tools).
  mkdirSync(join(dir, '.agents/skills/stdio-skill/scripts'), { recursive: true })
  writeFileSync(join(dir, '.agents/skills/stdio-skill/SKILL.md'), SKILL_MD)
  writeFileSync(join(dir, '.agents/skills/stdio-skill/scripts/run.sh'), 'echo run\n')
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp', '--workspace', dir],
    stderr: 'pipe',
  })
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  client = new Client({ name: 'isoagent-test', version: '0.0.0' })
  await client.connect(transport)
})
afterAll(async () => {
  await client?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('isoagent mcp over stdio (built bin, SDK client)', () => {
  it('lists and reads the workspace skills as skill:// resources', async () => {
    const { resources } = await client.listResources()
    expect(resources.map((r) => r.uri)).toEqual([
      'skill://stdio-skill/SKILL.md',
      'skill://stdio-skill/scripts/run.sh',
    ])
    const md = await client.readResource({ uri: 'skill://stdio-skill/SKILL.md' })
    expect(md.contents).toEqual([
      { uri: 'skill://stdio-skill/SKILL.md', mimeType: 'text/markdown', text: SKILL_MD },
    ])
    const script = await client.readResource({ uri: 'skill://stdio-skill/scripts/run.sh' })
    expect(script.contents[0]).toMatchObject({ text: 'echo run\n' })
    await expect(client.readResource({ uri: 'skill://stdio-skill/../a.txt' })).rejects.toThrow(
      /Resource not found/,
    )
  })

  it('lists exactly the tools a session over the directory serves, bash included', async () => {
    const { tools } = await client.listTools()
    const session = await Agent.create().session(localWorkspace(dir))
    try {
      expect(tools.map((t) => t.name)).toEqual(session.toolNames())
      expect(tools.map((t) => t.name)).toContain('bash')
      for (const def of session.toolDefinitions()) {
        const tool = tools.find((t) => t.name === def.name)!
        expect(tool.description).toBe(def.description)
        expect(tool.inputSchema).toEqual(def.parameters)
      }
    } finally {
      await session.close()
    }
    expect(client.getServerVersion()).toMatchObject({ name: 'isoagent' })
    expect(stderr).toContain('isoagent mcp: serving read, write')
  })

  it('writes and reads files on disk; metadata is the structured content', async () => {
    const wrote = await call('write', { file_path: 'notes/b.txt', content: 'one\ntwo\n' })
    expect(wrote.isError).toBe(false)
    expect(readFileSync(join(dir, 'notes/b.txt'), 'utf8')).toBe('one\ntwo\n')
    const read = await call('read', { file_path: 'a.txt', limit: 1 })
    expect(read).toMatchObject({ isError: false, content: [{ type: 'text' }] })
    // The model-side path: the model gets the continuation hint the host-direct CLI leaves out.
    expect(text(read)).toBe('     1\talpha\n... (more lines available; continue with offset=1)')
    expect(read.structuredContent).toMatchObject({ range: { next_offset: 1 } })
    expect(read.structuredContent).not.toHaveProperty('errorKind')
  })

  it('runs bash in the directory', async () => {
    const result = await call('bash', { command: 'cat notes/b.txt | wc -l' })
    expect(result.isError).toBe(false)
    expect(text(result).trim()).toBe('2')
  })

  it('a failing call is isError with the typed errorKind in structuredContent', async () => {
    const missing = await call('read', { file_path: 'nope.txt' })
    expect(missing.isError).toBe(true)
    expect(missing.structuredContent).toMatchObject({ errorKind: { type: 'not_found' } })
    expect(text(missing)).toMatch(/nope\.txt/)
    const bad = await call('read', { file_path: 'a.txt', bogus: 1 })
    expect(bad.isError).toBe(true)
    expect(bad.structuredContent).toMatchObject({ errorKind: { type: 'invalid_argument' } })
    const escape = await call('write', { file_path: '../outside.txt', content: 'x' })
    expect(escape.isError).toBe(true)
    expect(existsSync(join(dir, '../outside.txt'))).toBe(false)
    const unknown = await call('no_such_tool', {})
    expect(unknown.isError).toBe(true)
    expect(unknown.structuredContent).toHaveProperty('errorKind.type')
  })
})

describe('isoagent mcp process lifetime', () => {
  it('exits 0 soon after stdin closes, even with a session open', async () => {
    const child = spawn(process.execPath, [bin, 'mcp', '--workspace', dir], {
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'raw', version: '0' },
      },
    }
    child.stdin.write(JSON.stringify(init) + '\n')
    await new Promise<void>((resolve) => {
      const check = () => (out.includes('"id":1') ? resolve() : setTimeout(check, 10))
      check()
    })
    expect(JSON.parse(out.split('\n')[0]!)).toMatchObject({
      id: 1,
      result: { serverInfo: { name: 'isoagent' }, capabilities: { tools: {} } },
    })
    const started = Date.now()
    child.stdin.end()
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    expect(code).toBe(0)
    expect(Date.now() - started).toBeLessThan(1500)
  })

  it('refuses a missing workspace with exit code 2', async () => {
    const child = spawn(process.execPath, [bin, 'mcp', '--workspace', join(dir, 'missing')])
    let err = ''
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    expect(code).toBe(2)
    expect(err).toMatch(/not an existing directory/)
  })
})
