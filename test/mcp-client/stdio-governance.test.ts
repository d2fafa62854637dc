// The MCP client over stdio (Node, a child process group per server) and its governance:
// confirmation by annotations, permission rules by name inside program and batch, the
// process group gone after close, a server dying mid-call, invalid JSON on stdout.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace, type McpStdioConfig, type Session } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'

const script = fileURLToPath(new URL('./fixtures/stdio-server.mjs', import.meta.url))
let dir: string
let session: Session

const stdio = (mode = 'tools', log?: string): McpStdioConfig => ({
  transport: 'stdio',
  command: process.execPath,
  args: [script, mode, ...(log ? [log] : [])],
  toolTimeoutMs: 20_000,
})

/** Pids of live (not zombie) processes in process group `pgid`. */
function groupMembers(pgid: number): number[] {
  const out: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') out.push(Number(entry))
  }
  return out
}

async function pending(s: Session) {
  await expect.poll(() => s.pendingConfirmations().length).toBeGreaterThan(0)
  return s.pendingConfirmations()[0]!
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'isoagent-mcp-client-'))
  session = await Agent.create({ mcpServers: { fx: stdio() } }).session(localWorkspace(dir), {
    permissions: { deny: ['mcp__fx__wipe'] },
  })
})

afterAll(async () => {
  await session?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('MCP client over stdio, through a local workspace', () => {
  it('lists and calls the tools (a log line on stdout is ignored)', async () => {
    expect(session.mcpStatus()).toEqual([
      expect.objectContaining({ name: 'fx', connected: true, transport: 'stdio' }),
    ])
    expect(session.mcpStatus()[0]!.error).toBeUndefined()
    const r = await session.tool('mcp__fx__echo', { text: 'over stdio' })
    expect(r.output).toBe('echo: over stdio')
  })

  it('program reaches MCP tools with ctx.tool, and batch runs them', async () => {
    const p = await session.program({
      source: "return (await ctx.tool('mcp__fx__echo', { text: 'from program' })).output",
    })
    expect(p.exitCode).toBe(0)
    expect(p.output).toContain('echo: from program')
    const b = await session.tool('batch', {
      invocations: [
        { tool: 'mcp__fx__peek', args: { key: 'a' } },
        { tool: 'mcp__fx__echo', args: { text: 'b' } },
      ],
    })
    expect(b.exitCode).toBe(0)
    expect(b.output).toContain('value of a')
    expect(b.output).toContain('echo: b')
  })
})

describe('governance of MCP tools', () => {
  it('a model-side call of an unannotated tool asks; approved, it runs', async () => {
    const call = session.governedTool('mcp__fx__echo', { text: 'ask me' })
    const p = await pending(session)
    expect(p.toolName).toBe('mcp__fx__echo')
    session.confirmToolUse(p.id, true)
    expect((await call).output).toBe('echo: ask me')
  })

  it('refused, it does not run', async () => {
    const call = session.governedTool('mcp__fx__echo', { text: 'no' })
    session.confirmToolUse((await pending(session)).id, false)
    expect((await call).errorKind?.type).toBe('permission_denied')
  })

  it('a read-only closed-world tool runs without asking; host-direct calls never ask', async () => {
    const r = await session.governedTool('mcp__fx__peek', { key: 'k' })
    expect(r.output).toBe('value of k')
    expect(session.pendingConfirmations()).toEqual([])
  })

  it('a risk key or destructiveHint makes a read-only closed-world tool ask', async () => {
    const call = session.governedTool('mcp__fx__risky_peek', {})
    const p = await pending(session)
    expect(p.toolName).toBe('mcp__fx__risky_peek')
    session.confirmToolUse(p.id, true)
    expect((await call).output).toBe('peeked')
  })

  it('a deny rule by name refuses model-side calls', async () => {
    const r = await session.governedTool('mcp__fx__wipe', {})
    expect(r.errorKind?.type).toBe('permission_denied')
  })

  it('a deny rule mcp__srv__* holds inside a governed program and batch', async () => {
    const s = await Agent.create().session(memoryWorkspace({}), {
      mcpServers: { fx: stdio() },
      permissions: { deny: ['mcp__fx__*'] },
    })
    try {
      const p = await s.governedTool('program', {
        source:
          "const r = await ctx.tool('mcp__fx__peek', { key: 'x' }); return r.errorKind.type + ':' + r.exitCode",
      })
      expect(p.output).toContain('permission_denied:1')
      const b = await s.governedTool('batch', {
        invocations: [{ tool: 'mcp__fx__peek', args: { key: 'x' } }],
      })
      expect(b.exitCode).toBe(1)
      expect(b.output).toContain('denied by permission rule "mcp__fx__*"')
      // Other tools are untouched by the rule.
      expect((await s.governedTool('write', { file_path: 'a.txt', content: 'x' })).exitCode).toBe(0)
    } finally {
      await s.close()
    }
  })

  it('an allow rule mcp__srv__* lets an unannotated tool run without asking', async () => {
    const s = await Agent.create().session(memoryWorkspace({}), {
      mcpServers: { fx: stdio() },
      permissions: { allow: ['mcp__fx__*'] },
    })
    try {
      expect((await s.governedTool('mcp__fx__echo', { text: 'ok' })).output).toBe('echo: ok')
    } finally {
      await s.close()
    }
  })
})

describe('stdio lifecycle and failures', () => {
  it("the server's whole process group is gone after session.close()", async () => {
    const log = join(dir, 'group.log')
    const s = await Agent.create().session(memoryWorkspace({}), {
      mcpServers: { grp: stdio('child', log) },
    })
    expect(s.mcpStatus()[0]).toMatchObject({ connected: true })
    const pid = Number(/pid (\d+)/.exec(readFileSync(log, 'utf8'))![1])
    await expect.poll(() => /child (\d+)/.test(readFileSync(log, 'utf8'))).toBe(true)
    const child = Number(/child (\d+)/.exec(readFileSync(log, 'utf8'))![1])
    expect(groupMembers(pid)).toEqual(expect.arrayContaining([pid, child]))
    await s.close()
    expect(groupMembers(pid)).toEqual([])
    expect(
      existsSync(`/proc/${child}`) && !readFileSync(`/proc/${child}/stat`, 'utf8').includes(') Z'),
    ).toBe(false)
  })

  it('a server dying mid-call gives transport; the session keeps working', async () => {
    const s = await Agent.create().session(memoryWorkspace({}), {
      mcpServers: { dies: stdio(), other: stdio() },
    })
    try {
      const r = await s.tool('mcp__dies__die', {})
      expect(r.exitCode).toBe(1)
      expect(r.errorKind?.type).toBe('transport')
      const status = s.mcpStatus().find((x) => x.name === 'dies')!
      expect(status.connected).toBe(false)
      expect(status.error).toMatch(/exited/)
      expect((await s.tool('mcp__other__echo', { text: 'alive' })).output).toBe('echo: alive')
      expect((await s.tool('write', { file_path: 'f.txt', content: 'y' })).exitCode).toBe(0)
      const again = await s.tool('mcp__dies__echo', { text: 'x' })
      expect(again.exitCode).toBe(1)
    } finally {
      await s.close()
    }
  })

  it('a command that does not exist is a typed connect failure', async () => {
    const s = await Agent.create().session(memoryWorkspace({}))
    try {
      await expect(
        s.addMcpServer('nope', { transport: 'stdio', command: '/nonexistent/mcp-server' }),
      ).rejects.toMatchObject({ code: 'transport', message: expect.stringMatching(/ENOENT/) })
      expect(s.mcpStatus()[0]).toMatchObject({ connected: false, toolCount: 0 })
    } finally {
      await s.close()
    }
  })

  it('invalid JSON from a stdio server is a transport failure, not a hang', async () => {
    const s = await Agent.create().session(memoryWorkspace({}), {
      mcpServers: { bad: { ...stdio('garbage'), toolTimeoutMs: 20_000 } },
    })
    try {
      const status = s.mcpStatus()[0]!
      expect(status.connected).toBe(false)
      expect(status.error).toMatch(/invalid JSON|closed/)
      expect(s.toolNames().some((n) => n.startsWith('mcp__bad__'))).toBe(false)
    } finally {
      await s.close()
    }
  })

  it('a stdio timeout sends notifications/cancelled to the server', async () => {
    const log = join(dir, 'cancel.log')
    const s = await Agent.create().session(memoryWorkspace({}), {
      mcpServers: { sl: { ...stdio('tools', log), toolTimeoutMs: 8000 } },
    })
    try {
      expect(s.mcpStatus()[0]).toMatchObject({ connected: true })
      const r = await s.tool('mcp__sl__slow', { ms: 60_000 })
      expect(r.errorKind?.type).toBe('timeout')
      await expect.poll(() => readFileSync(log, 'utf8')).toMatch(/cancelled \d+/)
    } finally {
      await s.close()
    }
  })
})
