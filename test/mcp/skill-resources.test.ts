// The MCP server's skill resources (`skill://<name>/SKILL.md` and bundled files), read by the
// SDK's own Client over the Streamable HTTP `/mcp` of a real server.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { parse } from 'yaml'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { memoryWorkspace } from '../../adapters/index.ts'
import { createApp } from '../../edge/index.ts'
import { serve } from '../../edge/node.ts'

const TOKEN = 'test-token-skill-resources-0123'
const SKILL_MD =
  '---\nname: pdf-tools\ndescription: Fill and merge PDF forms\n---\n\nRun scripts/fill.py.\n'
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00, 0x01])
const files = {
  '.agents/skills/pdf-tools/SKILL.md': SKILL_MD,
  '.agents/skills/pdf-tools/scripts/fill.py': 'print("fill")\n',
  '.agents/skills/pdf-tools/ref/my notes.md': '# Notes\n',
  '.agents/skills/pdf-tools/logo.png': PNG,
  '.agents/skills/notes.md': '---\nname: notes\ndescription: Take notes\n---\nWrite them down.\n',
  'outside.txt': 'not a skill file\n',
}

let server: { url: string; close(): Promise<void> }
const clients: Client[] = []

beforeAll(async () => {
  const shared = memoryWorkspace(files)
  const app = createApp({
    workspace: () => shared,
    token: TOKEN,
    session: {
      skills: {
        inline: [
          {
            name: 'inline-one',
            description: 'Given in code',
            allowedTools: ['read'],
            tags: ['x'],
            body: 'Inline body.\n',
          },
        ],
      },
    },
  })
  server = await serve(app, { port: 0, hostname: '127.0.0.1', handleSignals: false })
})
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)))
})
afterAll(() => server.close())

async function connect(): Promise<Client> {
  const client = new Client({ name: 'isoagent-test', version: '0.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  )
  clients.push(client)
  return client
}

const textOf = (contents: object[]) =>
  contents.map((c) => ('text' in c ? String(c.text) : '')).join('')

describe('MCP skill resources', () => {
  it('declares resources and lists each skill and its bundled files', async () => {
    const client = await connect()
    expect(client.getServerCapabilities()?.resources).toBeDefined()
    const { resources } = await client.listResources()
    expect(resources.map((r) => r.uri).sort()).toEqual([
      'skill://inline-one/SKILL.md',
      'skill://notes/SKILL.md',
      'skill://pdf-tools/SKILL.md',
      'skill://pdf-tools/logo.png',
      'skill://pdf-tools/ref/my%20notes.md',
      'skill://pdf-tools/scripts/fill.py',
    ])
    const md = resources.find((r) => r.uri === 'skill://pdf-tools/SKILL.md')
    expect(md).toMatchObject({ mimeType: 'text/markdown', description: 'Fill and merge PDF forms' })
  })

  it('reads SKILL.md (front matter + body) and bundled files, text and binary', async () => {
    const client = await connect()
    const skill = await client.readResource({ uri: 'skill://pdf-tools/SKILL.md' })
    expect(skill.contents).toEqual([
      { uri: 'skill://pdf-tools/SKILL.md', mimeType: 'text/markdown', text: SKILL_MD },
    ])
    const script = await client.readResource({ uri: 'skill://pdf-tools/scripts/fill.py' })
    expect(textOf(script.contents)).toBe('print("fill")\n')
    const notes = await client.readResource({ uri: 'skill://pdf-tools/ref/my%20notes.md' })
    expect(textOf(notes.contents)).toBe('# Notes\n')
    const logo = await client.readResource({ uri: 'skill://pdf-tools/logo.png' })
    const blob = (logo.contents[0] as { blob?: string }).blob ?? ''
    expect(new Uint8Array(Buffer.from(blob, 'base64'))).toEqual(PNG)
    const flat = await client.readResource({ uri: 'skill://notes/SKILL.md' })
    expect(textOf(flat.contents)).toContain('Write them down.')
  })

  it('gives an inline skill a SKILL.md of its front matter and body', async () => {
    const client = await connect()
    const read = await client.readResource({ uri: 'skill://inline-one/SKILL.md' })
    const text = textOf(read.contents)
    const match = /^---\n([\s\S]*?)---\n\n([\s\S]*)$/.exec(text)
    expect(match).not.toBeNull()
    expect(parse(match![1]!)).toEqual({
      name: 'inline-one',
      description: 'Given in code',
      'allowed-tools': ['read'],
      tags: ['x'],
    })
    expect(match![2]).toBe('Inline body.\n')
  })

  it('refuses URIs that name no skill resource with an MCP error', async () => {
    const client = await connect()
    for (const uri of [
      'skill://nope/SKILL.md',
      'skill://pdf-tools/missing.txt',
      'skill://pdf-tools/../../outside.txt',
      'skill://pdf-tools/%2E%2E/%2E%2E/%2E%2E/outside.txt',
      'skill://pdf-tools',
      'file:///etc/passwd',
      'skill://pdf-tools/%E0%A4%A',
    ])
      await expect(client.readResource({ uri }), uri).rejects.toThrow(/Resource not found/)
    // The session still answers afterwards.
    expect((await client.listResources()).resources.length).toBe(6)
  })
})
