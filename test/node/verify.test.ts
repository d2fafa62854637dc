import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace, type Session, type SessionOptions } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'

const roots: string[] = []
const sessions: Session[] = []

async function open(options: SessionOptions = {}): Promise<Session> {
  const root = mkdtempSync(join(tmpdir(), 'isoagent-verify-'))
  roots.push(root)
  const session = await Agent.create().session(localWorkspace(root), options)
  sessions.push(session)
  return session
}

afterAll(async () => {
  for (const s of sessions) await s.close()
  for (const root of roots) rmSync(root, { recursive: true, force: true })
})

describe('session.verifyCommands', () => {
  it('passes when every required check exits 0, whatever optional checks do', async () => {
    const session = await open()
    const report = await session.verifyCommands('feature X', [
      { id: 'build', kind: 'build', command: 'echo built', description: 'compile' },
      { id: 'lint', kind: 'lint', command: 'echo warn >&2; exit 2', required: false },
    ])
    expect(report.subject).toBe('feature X')
    expect(report.passed).toBe(true)
    expect(report.results).toHaveLength(2)
    expect(report.results[0]).toMatchObject({
      id: 'build',
      kind: 'build',
      required: true,
      exitCode: 0,
      outputTail: 'built\n',
      timedOut: false,
    })
    expect(report.results[0]!.durationMs).toBeGreaterThanOrEqual(0)
    expect(report.results[1]).toMatchObject({
      id: 'lint',
      required: false,
      exitCode: 2,
      timedOut: false,
    })
    expect(report.results[1]!.outputTail).toContain('warn')
  })

  it('fails on a failed or timed-out required check, and keeps the output tail', async () => {
    const session = await open()
    const report = await session.verifyCommands('feature Y', [
      { id: 'test', kind: 'test', command: 'seq 1 20000; echo "2 failed"; exit 1' },
      { id: 'slow', kind: 'e2e', command: 'sleep 30', timeoutMs: 1000 },
      { id: 'ok', kind: 'lint', command: 'true' },
    ])
    expect(report.passed).toBe(false)
    const [test, slow, ok] = report.results
    expect(test).toMatchObject({ exitCode: 1, timedOut: false })
    expect(test!.outputTail.length).toBeLessThanOrEqual(4096)
    expect(test!.outputTail).toContain('20000\n2 failed\n[bash: exit code 1]')
    expect(slow).toMatchObject({ exitCode: null, timedOut: true })
    expect(slow!.durationMs).toBeLessThan(4000)
    expect(ok).toMatchObject({ exitCode: 0 })
  })

  it('goes through the governed path: permission rules apply', async () => {
    const session = await open({ permissions: { deny: ['bash(rm *)'] } })
    const report = await session.verifyCommands('cleanup', [
      { id: 'rm', kind: 'cleanup', command: 'rm -rf build' },
    ])
    expect(report.passed).toBe(false)
    expect(report.results[0]).toMatchObject({ exitCode: null, timedOut: false })
    expect(report.results[0]!.outputTail).toContain('denied by permission rule')
  })

  it('refuses malformed input before running anything', async () => {
    const session = await open()
    const bad: [unknown, unknown][] = [
      ['', [{ id: 'a', kind: 'k', command: 'true' }]],
      ['s', []],
      ['s', [{ id: 'a', kind: 'k' }]],
      ['s', [{ id: 'a', kind: 'k', command: '  ' }]],
      ['s', [{ id: 'a', kind: 'k', command: 'true', timeoutMs: 999 }]],
      ['s', [{ id: 'a', kind: 'k', command: 'true', extra: 1 }]],
      [
        's',
        [
          { id: 'a', kind: 'k', command: 'true' },
          { id: 'a', kind: 'k', command: 'true' },
        ],
      ],
    ]
    for (const [subject, commands] of bad) {
      await expect(
        session.verifyCommands(subject as string, commands as never),
        JSON.stringify([subject, commands]),
      ).rejects.toMatchObject({ code: 'invalid_argument' })
    }
  })

  it('reports every check as not run where the workspace has no bash', async () => {
    const session = await Agent.create().session(memoryWorkspace())
    const report = await session.verifyCommands('s', [{ id: 'a', kind: 'k', command: 'true' }])
    expect(report.passed).toBe(false)
    expect(report.results[0]).toMatchObject({ exitCode: null })
    await session.close()
  })
})
