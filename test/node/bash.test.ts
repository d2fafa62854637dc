import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  Agent,
  IsoagentError,
  memoryWorkspace,
  ToolResultTransformPolicy,
  type SessionEvent,
} from '../../adapters/index.ts'
import { localWorkspace, nodeShell } from '../../adapters/node/index.ts'
import { meta, newRoot, open, timed, useBashFixtures } from './bash-helpers.ts'

useBashFixtures()

describe('bash tool on a local workspace', () => {
  it('is offered exactly where the workspace can run commands', async () => {
    const { session } = await open()
    expect(session.toolNames()).toContain('bash')
    expect(session.workspace.capabilities.exec).toBe(true)
    const memory = await Agent.create().session(memoryWorkspace({ 'a.txt': 'x' }))
    expect(memory.toolNames()).not.toContain('bash')
    expect(memory.workspace.shell).toBeUndefined()
    expect((await memory.tool('bash', { command: 'true' })).errorKind?.type).toBe('unsupported')
    await memory.close()
  })

  it('runs in the workspace root, captures stdout and stderr separately', async () => {
    const { session, root } = await open()
    const r = await session.tool('bash', { command: 'pwd; echo oops >&2; printf tail' })
    expect(r.exitCode).toBe(0)
    expect(r.output).toBe(`${root}\ntail\n[stderr]\noops\n`)
    const m = meta(r)
    expect(m.exit_code).toBe(0)
    expect(m.timeout_ms).toBe(120_000)
    expect(m.output).toMatchObject({
      total_bytes: root.length + 1 + 4 + 5,
      truncated: false,
      timed_out: false,
      stdout: { total_bytes: root.length + 1 + 4, truncated: false },
      stderr: { total_bytes: 5, captured_bytes: 5, truncated: false },
    })
    // cd / is allowed (the tool is not a sandbox); the next call starts in the root again.
    expect(await session.bash('cd / && pwd')).toBe('/\n')
    expect(await session.bash('pwd')).toBe(`${root}\n`)
  })

  it('reports a non-zero exit as a failure with the output and the real exit code', async () => {
    const { session } = await open()
    const r = await session.tool('bash', { command: 'echo partial; exit 3' })
    expect(r.exitCode).toBe(1)
    expect(r.errorKind).toEqual({
      type: 'transport',
      op: 'bash',
      message: 'command exited with code 3',
    })
    expect(r.output).toBe('partial\n[bash: exit code 3]')
    expect(meta(r).exit_code).toBe(3)
    const thrown = await session.bash('echo partial; exit 3').catch((e: unknown) => e)
    expect(thrown).toBeInstanceOf(IsoagentError)
    expect(thrown).toMatchObject({ code: 'transport', data: { exitCode: 3 } })
    expect((thrown as IsoagentError).data.output).toContain('partial')
  })

  it('gives commands a clean environment: no inherited secrets, host-chosen variables only', async () => {
    expect(process.env.ISOAGENT_TEST_SECRET).toBe('do-not-leak-4711')
    const { session } = await open({}, {}, { shellEnv: { GIVEN: 'by-host' } })
    const env = await session.bash('env')
    expect(env).not.toContain('do-not-leak-4711')
    expect(env).not.toContain('ISOAGENT_TEST_SECRET')
    expect(env).toContain('GIVEN=by-host\n')
    expect(env).toContain('TERM=dumb\n')
    expect(env).toContain('LANG=C.UTF-8\n')
    expect(env).toMatch(/^PATH=/m)
    expect(env).toMatch(/^HOME=/m)
    // Malformed shell options are refused when the workspace is made.
    const root = newRoot()
    expect(() => localWorkspace(root, { shellEnv: { N: 1 as unknown as string } })).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    )
    expect(() => localWorkspace(root, { shellMaxProcesses: 0 })).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    )
  })

  it('closes stdin: a command that reads it sees end of input at once', async () => {
    const { session } = await open()
    const { value, ms } = await timed(() =>
      session.bash('cat; echo "cat=$?"; read -r line; echo "read=$?"; [ -t 0 ] || echo no-tty', {
        timeout: 5000,
      }),
    )
    expect(value).toBe('cat=0\nread=1\nno-tty\n')
    expect(ms).toBeLessThan(3000)
  })

  it('keeps the first and last lines of a 40,000-line output with exact totals', async () => {
    const { session } = await open()
    const r = await session.tool('bash', { command: 'seq 1 40000' })
    const expected = Array.from({ length: 40000 }, (_, i) => `${i + 1}\n`).join('')
    const total = Buffer.byteLength(expected)
    expect(r.exitCode).toBe(0)
    expect(r.output.startsWith('1\n2\n3\n')).toBe(true)
    expect(r.output.endsWith('39999\n40000\n')).toBe(true)
    const m = meta(r)
    expect(m.output).toMatchObject({
      total_bytes: total,
      captured_bytes: 65536 + 36864,
      truncated: true,
      stdout: { total_bytes: total, captured_bytes: 65536 + 36864, truncated: true },
    })
    const shown = m.output.stdout.shown_bytes
    const omitted = total - shown
    expect(r.output).toContain(`[bash: stdout cut: ${omitted} of ${total} bytes omitted here`)
    // What is shown around the marker is exactly the stream's head and tail.
    const [head, tail] = r.output.split(/\n\[bash: stdout cut: [^\]]*\]\n/)
    expect(expected.startsWith(head!)).toBe(true)
    expect(expected.endsWith(tail!)).toBe(true)
    expect(Buffer.byteLength(head!) + Buffer.byteLength(tail!)).toBe(shown)
    // The output fits the session's projection: it passes unchanged, tail included.
    const evidence = r.metadata?.a3s_tool_result_evidence as { loss_mode: string }
    expect(evidence.loss_mode).toBe('none')
    // The same under the context-efficient preset.
    const ce = await open(
      {},
      { toolResultTransformPolicy: ToolResultTransformPolicy.contextEfficient() },
    )
    const r2 = await ce.session.tool('bash', { command: 'seq 1 40000' })
    expect(r2.output.startsWith('1\n2\n')).toBe(true)
    expect(r2.output.endsWith('\n40000\n')).toBe(true)
  })

  it('shows both large streams with their heads and tails', async () => {
    const { session } = await open()
    const r = await session.tool('bash', {
      command: 'seq 1 30000; seq 100001 130000 >&2',
    })
    expect(r.output.startsWith('1\n2\n')).toBe(true)
    expect(r.output).toContain('\n30000\n[stderr]\n100001\n100002\n')
    expect(r.output.endsWith('\n130000\n')).toBe(true)
    expect(r.output).toMatch(/\[bash: stdout cut: \d+ of 168894 bytes omitted here/)
    expect(r.output).toMatch(/\[bash: stderr cut: \d+ of 210000 bytes omitted here/)
    expect(Buffer.byteLength(r.output)).toBeLessThanOrEqual(102400)
  })

  it('bounds a 1 GB output: exact total, bounded memory', async () => {
    const { session } = await open()
    const rssBefore = process.memoryUsage().rss
    const r = await session.tool('bash', { command: 'yes | head -c 1G', timeout: 60_000 })
    const grown = process.memoryUsage().rss - rssBefore
    expect(r.exitCode).toBe(0)
    const m = meta(r)
    expect(m.output.total_bytes).toBe(1024 ** 3)
    expect(m.output.captured_bytes).toBe(65536 + 36864)
    expect(r.output.startsWith('y\ny\n')).toBe(true)
    expect(r.output.endsWith('y\ny\n')).toBe(true)
    expect(grown).toBeLessThan(200 * 1024 * 1024)
  }, 60_000)

  it('reports the paths a command created, modified and deleted (not .git)', async () => {
    const { session } = await open({
      'keep.txt': 'k',
      'mod.txt': 'm',
      'del.txt': 'd',
      '.git/HEAD': 'ref: refs/heads/main\n',
    })
    const r = await session.tool('bash', {
      command:
        'echo new > new.txt; echo more >> mod.txt; rm del.txt; mkdir -p d/e; echo x > d/e/f; echo y > .git/HEAD',
    })
    expect(meta(r).changed_paths).toEqual({
      created: ['d', 'd/e', 'd/e/f', 'new.txt'],
      modified: ['mod.txt'],
      deleted: ['del.txt'],
      counts: { created: 4, modified: 1, deleted: 1 },
      truncated: false,
      scanned: 6,
    })
    const none = await session.tool('bash', { command: 'cat keep.txt' })
    expect(meta(none).changed_paths).toMatchObject({ created: [], modified: [], deleted: [] })
  })

  it('walks the workspace in sorted depth-first order, skips .git, and says when the bound cut it', async () => {
    const root = newRoot({
      'b.txt': '',
      'a/z.txt': '',
      'a/y.txt': '',
      '.git/HEAD': '',
      'c.txt': '',
    })
    const shell = nodeShell({ root })
    const all = await shell.snapshot({ maxEntries: 100 })
    expect([...all.entries.keys()]).toEqual(['a', 'a/y.txt', 'a/z.txt', 'b.txt', 'c.txt'])
    expect(all.truncated).toBe(false)
    expect(all.entries.get('a')!.kind).toBe('directory')
    const cut = await shell.snapshot({ maxEntries: 3 })
    expect([...cut.entries.keys()]).toEqual(['a', 'a/y.txt', 'a/z.txt'])
    expect(cut.truncated).toBe(true)
    const stopped = await shell.snapshot({ maxEntries: 100, signal: AbortSignal.abort() })
    expect(stopped).toEqual({ entries: new Map(), truncated: true })
  })

  it('streams output as tool_output_delta events while the command runs', async () => {
    const { session } = await open()
    const events: SessionEvent[] = []
    const subscription = session.events()
    const collecting = (async () => {
      for await (const e of subscription) {
        events.push(e)
        if (e.type === 'tool_end') break
      }
    })()
    const r = await session.tool('bash', { command: 'echo one; sleep 0.5; echo two >&2' })
    await collecting
    const deltas = events.filter((e) => e.type === 'tool_output_delta')
    expect(deltas.map((d) => (d as { delta: string }).delta).join('')).toBe('one\ntwo\n')
    const end = events.find((e) => e.type === 'tool_end')!
    expect(end.timestamp - deltas[0]!.timestamp).toBeGreaterThanOrEqual(400)
    expect(r.exitCode).toBe(0)
  })

  it('refuses bad arguments with invalid_argument and runs nothing', async () => {
    const { session, root } = await open()
    for (const args of [
      { command: '' },
      { command: '   \n' },
      { command: 'touch x', timeout: 999 },
      { command: 'touch x', timeout: 1500.5 },
      { command: 'touch x', bogus: true },
      { command: 'touch x', sandbox_permissions: 'root' },
      { command: 'touch x'.padEnd(30_001, ' ') },
      {},
    ]) {
      const r = await session.tool('bash', args)
      expect(r.errorKind?.type, JSON.stringify(args).slice(0, 80)).toBe('invalid_argument')
    }
    expect(existsSync(join(root, 'x'))).toBe(false)
  })

  it('always asks for confirmation with require_escalated, even host-direct', async () => {
    const { session, root } = await open({}, { permissions: { allow: ['bash'] } })
    for (const call of [
      (args: unknown) => session.tool('bash', args),
      (args: unknown) => session.governedTool('bash', args),
    ]) {
      const events = session.events()
      const pending = call({
        command: 'echo hi > esc.txt',
        sandbox_permissions: 'require_escalated',
        justification: 'needs network',
      })
      let asked: SessionEvent | undefined
      for await (const e of events) {
        if (e.type === 'confirmation_required') {
          asked = e
          break
        }
      }
      await events.return?.()
      expect(asked).toMatchObject({
        toolName: 'bash',
        reason: 'bash asks for escalated permissions: needs network',
      })
      expect(session.pendingConfirmations()).toMatchObject([
        { toolName: 'bash', reason: 'bash asks for escalated permissions: needs network' },
      ])
      expect(existsSync(join(root, 'esc.txt'))).toBe(false)
      session.confirmToolUse((asked as { confirmationId: string }).confirmationId, false)
      const refused = await pending
      expect(refused.errorKind?.type).toBe('permission_denied')
      expect(existsSync(join(root, 'esc.txt'))).toBe(false)
    }
    const approvedCall = session.tool('bash', {
      command: 'echo hi > esc.txt',
      sandbox_permissions: 'require_escalated',
    })
    await new Promise((r) => setTimeout(r, 50))
    const [p] = session.pendingConfirmations()
    session.confirmToolUse(p!.id, true)
    expect((await approvedCall).exitCode).toBe(0)
    expect(readFileSync(join(root, 'esc.txt'), 'utf8')).toBe('hi\n')
    // use_default needs no confirmation.
    expect(
      (await session.tool('bash', { command: 'true', sandbox_permissions: 'use_default' }))
        .exitCode,
    ).toBe(0)
  })
})
