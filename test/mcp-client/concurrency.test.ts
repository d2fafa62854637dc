// Concurrent callers of one MCP server: two sessions calling the same server's tools at once; the
// server dropping every connection in the middle of calls (a typed `transport` failure, well
// before the call's deadline, and the session keeps working); a session closed in the middle of
// its calls (they end `cancelled`, the server hears notifications/cancelled, the other session
// is untouched).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace, type Session } from '../../adapters/index.ts'
import { streamableServer, type LoopbackMcp } from './http-servers.ts'
import { toolServer } from './fixtures/tool-server.mjs'

const DEADLINE_MS = 30_000
let mcp: LoopbackMcp
const state = { cancelled: [] as string[] }

beforeAll(async () => {
  mcp = await streamableServer(() => toolServer(state))
})
afterAll(() => mcp?.close())

async function sessionOn(server: LoopbackMcp): Promise<Session> {
  return Agent.create().session(memoryWorkspace({}), {
    mcpServers: { srv: { transport: 'http', url: server.url, toolTimeoutMs: DEADLINE_MS } },
  })
}

describe('two sessions on one MCP server', () => {
  it('call the same tools at once; each gets its own answers', async () => {
    const [a, b] = await Promise.all([sessionOn(mcp), sessionOn(mcp)])
    try {
      const calls = Array.from({ length: 20 }, (_, i) => {
        const session = i % 2 === 0 ? a : b
        const who = i % 2 === 0 ? 'a' : 'b'
        return i % 5 === 0
          ? session.tool('mcp__srv__slow', { ms: 200 }).then((r) => [r, `slept 200`] as const)
          : session
              .tool('mcp__srv__echo', { text: `${who}-${i}` })
              .then((r) => [r, `echo: ${who}-${i}`] as const)
      })
      for (const [result, expected] of await Promise.all(calls)) {
        expect(result.exitCode).toBe(0)
        expect(result.output).toBe(expected)
      }
      expect(a.mcpStatus()[0]).toMatchObject({ connected: true })
      expect(b.mcpStatus()[0]).toMatchObject({ connected: true })
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  }, 60_000)
})

describe('a server that drops its connections mid-call', () => {
  it('fails the open calls with transport, long before their deadline, and reconnects', async () => {
    const own = await streamableServer(() => toolServer())
    // Two sessions (a session runs its unannotated, mutating calls one at a time).
    const [a, b] = await Promise.all([sessionOn(own), sessionOn(own)])
    try {
      const started = Date.now()
      const open = [
        a.tool('mcp__srv__slow', { ms: 20_000 }),
        b.tool('mcp__srv__slow', { ms: 20_000 }),
      ]
      await new Promise((r) => setTimeout(r, 300))
      await own.restart()
      const results = await Promise.all(open)
      const took = Date.now() - started
      for (const r of results) {
        expect(r.exitCode).toBe(1)
        expect(r.errorKind?.type).toBe('transport')
      }
      expect(took).toBeLessThan(DEADLINE_MS / 2)
      // The sessions keep working: the next call reconnects (a new MCP session on the server).
      for (const session of [a, b]) {
        const again = await session.tool('mcp__srv__echo', { text: 'back' })
        expect(again.output).toBe('echo: back')
        expect(session.mcpStatus()[0]).toMatchObject({ connected: true })
      }
    } finally {
      await Promise.all([a.close(), b.close()])
      await own.close()
    }
  }, 60_000)
})

describe('a session closed mid-call', () => {
  it('ends its calls as cancelled, tells the server, and leaves the other session working', async () => {
    const [a, b] = await Promise.all([sessionOn(mcp), sessionOn(mcp)])
    const before = state.cancelled.length
    try {
      const started = Date.now()
      const pending = a.tool('mcp__srv__slow', { ms: 20_000 })
      const other = b.tool('mcp__srv__slow', { ms: 600 })
      await new Promise((r) => setTimeout(r, 300))
      await a.close()
      const result = await pending
      expect(result.exitCode).toBe(1)
      expect(result.errorKind?.type).toBe('cancelled')
      expect(Date.now() - started).toBeLessThan(DEADLINE_MS / 2)
      expect((await other).output).toBe('slept 600')
      await expect.poll(() => state.cancelled.length, { timeout: 5_000 }).toBeGreaterThan(before)
      // A closed session refuses new calls, typed; the other one still answers.
      const late = await a.tool('mcp__srv__echo', { text: 'x' })
      expect(late.exitCode).toBe(1)
      expect((await b.tool('mcp__srv__echo', { text: 'still' })).output).toBe('echo: still')
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  }, 60_000)
})
