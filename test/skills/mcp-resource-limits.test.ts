// skill:// resources are read bounded: a bundled file over 8 MiB, or a SKILL.md that grew past
// its 1 MiB limit after discovery, is an MCP error naming the limit; smaller ones are served.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { expect, it } from 'vitest'
import { Agent, memoryWorkspace, WorkspacePath } from '../../adapters/index.ts'
import { createMcpServer } from '../../edge/mcp/index.ts'
import { streamableServer } from '../mcp-client/http-servers.ts'

it('refuses oversized skill resources with an MCP error and serves the rest', async () => {
  const ws = memoryWorkspace({
    '.agents/skills/big/SKILL.md': '---\nname: big\ndescription: Has a big file\n---\nBody.\n',
    '.agents/skills/big/data.bin': new Uint8Array(9 * 1024 * 1024),
    '.agents/skills/big/small.txt': 'small\n',
  })
  const session = await Agent.create().session(ws)
  const http = await streamableServer(() => createMcpServer(session))
  const client = new Client({ name: 'limits', version: '0' })
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)))
    await expect(client.readResource({ uri: 'skill://big/data.bin' })).rejects.toThrow(
      /too large \(over 8388608 bytes\)/,
    )
    const small = await client.readResource({ uri: 'skill://big/small.txt' })
    expect(small.contents).toEqual([
      { uri: 'skill://big/small.txt', mimeType: 'text/plain', text: 'small\n' },
    ])
    await ws.write(
      WorkspacePath.parse('.agents/skills/big/SKILL.md'),
      new TextEncoder().encode(`---\nname: big\ndescription: x\n---\n${'y'.repeat(2 << 20)}`),
    )
    await expect(client.readResource({ uri: 'skill://big/SKILL.md' })).rejects.toThrow(
      /too large \(over 1048576 bytes\)/,
    )
  } finally {
    await client.close()
    await http.close()
    await session.close()
  }
})
