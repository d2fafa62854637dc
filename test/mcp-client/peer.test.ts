// isoagent as its own peer: a session whose MCP client points at another isoagent's /mcp.
import { describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace } from '../../adapters/index.ts'
import { createApp } from '../../edge/http/app.ts'
import { serve } from '../../edge/node.ts'

describe('isoagent → isoagent over MCP', () => {
  it("lists the peer's tools and reads its workspace through them", async () => {
    const token = 'peer-token-123'
    const app = createApp({
      workspace: () => memoryWorkspace({ 'notes.txt': 'from the peer\n' }),
      token,
    })
    const handle = await serve(app, { port: 0, hostname: '127.0.0.1', handleSignals: false })
    const session = await Agent.create().session(memoryWorkspace({}), {
      mcpServers: {
        peer: {
          transport: 'http',
          url: `${handle.url}/mcp`,
          headers: { Authorization: `Bearer ${token}` },
        },
      },
    })
    try {
      expect(session.mcpStatus()[0]).toMatchObject({ connected: true })
      expect(session.toolNames()).toEqual(
        expect.arrayContaining(['mcp__peer__read', 'mcp__peer__write']),
      )
      const r = await session.tool('mcp__peer__read', { file_path: 'notes.txt' })
      expect(r.exitCode).toBe(0)
      expect(r.output).toContain('from the peer')
      expect(r.output).not.toContain(token)
    } finally {
      await session.close()
      await app.close()
      await new Promise((r) => handle.server.close(r))
    }
  })
})
