// skill:// resources follow the session's skills: the MCP server declares
// `resources: { listChanged: true }` and sends notifications/resources/list_changed when a skill
// is added or removed; an SDK Client over Streamable HTTP on loopback hears it and re-lists.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace, type Session } from '../../adapters/index.ts'
import { createMcpServer } from '../../edge/mcp/index.ts'
import { streamableServer, type LoopbackMcp } from '../mcp-client/http-servers.ts'

const FILES = {
  '.agents/skills/notes.md': '---\nname: notes\ndescription: Take notes\n---\nWrite them down.\n',
}
const open: { session: Session; http: LoopbackMcp; client: Client }[] = []
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.client.close().catch(() => undefined)
    await o.http.close()
    await o.session.close()
  }
})

async function connected() {
  const session = await Agent.create().session(memoryWorkspace(FILES))
  const http = await streamableServer(() => createMcpServer(session))
  const client = new Client({ name: 'list-changed-test', version: '0.0.0' })
  const heard: number[] = []
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    heard.push(Date.now())
  })
  await client.connect(new StreamableHTTPClientTransport(new URL(http.url)))
  open.push({ session, http, client })
  return { session, client, heard }
}

const uris = async (client: Client) =>
  (await client.listResources()).resources.map((r) => r.uri).sort()

describe('skill resources: list_changed', () => {
  it('declares resources.listChanged', async () => {
    const { client } = await connected()
    expect(client.getServerCapabilities()?.resources).toMatchObject({ listChanged: true })
  })

  it('notifies on addSkill and removeSkill; the next list shows the change', async () => {
    const { session, client, heard } = await connected()
    expect(await uris(client)).toEqual(['skill://notes/SKILL.md'])
    // The client opens its notification stream after initialize: wait until the server has it.
    await new Promise((r) => setTimeout(r, 300))
    session.addSkill({ name: 'fresh', description: 'Added live', body: 'New.\n' })
    await expect.poll(() => heard.length, { timeout: 5_000 }).toBe(1)
    expect(await uris(client)).toEqual(['skill://fresh/SKILL.md', 'skill://notes/SKILL.md'])
    const read = await client.readResource({ uri: 'skill://fresh/SKILL.md' })
    expect(JSON.stringify(read.contents)).toContain('New.')
    expect(session.removeSkill('notes')).toBe(true)
    await expect.poll(() => heard.length, { timeout: 5_000 }).toBe(2)
    expect(await uris(client)).toEqual(['skill://fresh/SKILL.md'])
  })

  it('one notification for several changes in one turn; none after the client left', async () => {
    const { session, client, heard } = await connected()
    await new Promise((r) => setTimeout(r, 300))
    for (let i = 0; i < 5; i++) session.addSkill({ name: `burst-${i}`, description: 'x', body: '' })
    await expect.poll(() => heard.length, { timeout: 5_000 }).toBe(1)
    await new Promise((r) => setTimeout(r, 200))
    expect(heard.length).toBe(1)
    await client.close()
    // The session keeps changing after its MCP client is gone: no throw, nothing sent.
    session.addSkill({ name: 'after-close', description: 'x', body: '' })
    expect(session.skills().skills.map((s) => s.name)).toContain('after-close')
  })
})
