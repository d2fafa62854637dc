// `isoagent serve --allow/--ask/--deny RULE`: the rules reach every session (the built bin).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { startDemoServer } from '../web-demo/demo-harness.ts'

const bin = fileURLToPath(new URL('../../bin/isoagent.mjs', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'isoagent-serve-rules-'))
writeFileSync(join(dir, 'open.txt'), 'open\n')
writeFileSync(join(dir, 'secret.txt'), 'secret\n')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function run(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, 'serve', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    child.on('exit', (code) => done({ code, out }))
  })
}

describe('isoagent serve permission rules', () => {
  it('applies repeated --deny/--ask rules to every session', async () => {
    const server = await startDemoServer([
      '--workspace',
      dir,
      '--deny',
      'read(secret*)',
      '--deny',
      'bash',
      '--ask',
      'write(*)',
    ])
    try {
      const auth = { authorization: `Bearer ${server.token}` }
      const { id } = (await (
        await fetch(`${server.url}/v1/sessions`, { method: 'POST', headers: auth })
      ).json()) as { id: string }
      const call = async (tool: string, args: unknown) =>
        (await (
          await fetch(`${server.url}/v1/sessions/${id}/tools/${tool}`, {
            method: 'POST',
            headers: auth,
            body: JSON.stringify({ args }),
          })
        ).json()) as { exitCode: number; errorKind?: { type: string } }
      expect(await call('read', { file_path: 'open.txt' })).toMatchObject({ exitCode: 0 })
      expect(await call('read', { file_path: 'secret.txt' })).toMatchObject({
        exitCode: 1,
        errorKind: { type: 'permission_denied' },
      })
      expect(await call('bash', { command: 'echo hi' })).toMatchObject({
        exitCode: 1,
        errorKind: { type: 'permission_denied' },
      })
      // The ask rule holds the write until it is answered: refuse it.
      const writing = call('write', { file_path: 'new.txt', content: 'x' })
      let pending: { id: string }[] = []
      for (let i = 0; i < 100 && pending.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 50))
        pending = (await (
          await fetch(`${server.url}/v1/sessions/${id}/confirmations`, { headers: auth })
        ).json()) as { id: string }[]
      }
      expect(pending).toHaveLength(1)
      const answer = await fetch(
        `${server.url}/v1/sessions/${id}/confirmations/${pending[0]!.id}`,
        {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ approved: false }),
        },
      )
      expect(answer.status).toBe(204)
      expect(await writing).toMatchObject({ exitCode: 1, errorKind: { type: 'permission_denied' } })
    } finally {
      await server.stop()
    }
  })

  it('refuses a rule that does not parse with exit code 2', async () => {
    const { code, out } = await run(['--workspace', dir, '--port', '0', '--ask', 'bash('])
    expect(code).toBe(2)
    expect(out).toContain('rule "bash(" does not parse')
  })
})
