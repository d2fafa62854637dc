import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../../bin/isoagent.mjs', import.meta.url))
let dir: string

function cli(...args: string[]) {
  const run = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' })
  return { code: run.status, stdout: run.stdout, stderr: run.stderr }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'isoagent-cli-'))
  writeFileSync(join(dir, 'a.txt'), 'alpha\nbeta\n')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('isoagent CLI (built bin)', () => {
  it('lists the tool surface of a local workspace', () => {
    const { code, stdout } = cli('tools', '--workspace', dir)
    expect(code).toBe(0)
    expect(stdout.split('\n').map((l) => l.split(' ')[0])).toEqual([
      'read',
      'write',
      'edit',
      'patch',
      'ls',
      'search',
      'git',
      'batch',
      '',
    ])
    const json = cli('tools', '--workspace', dir, '--json')
    const defs = JSON.parse(json.stdout) as {
      name: string
      parameters: { additionalProperties: boolean }
    }[]
    expect(defs.every((d) => d.parameters.additionalProperties === false)).toBe(true)
  })

  it('prints a call result and mirrors its exit code', () => {
    const ok = cli('call', 'read', '{"file_path":"a.txt"}', '-w', dir)
    expect(ok).toMatchObject({ code: 0, stdout: '     1\talpha\n     2\tbeta\n' })
    const json = cli('call', 'read', '{"file_path":"a.txt","limit":1}', '-w', dir, '--json')
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject({
      name: 'read',
      exitCode: 0,
      metadata: { range: { next_offset: 1 } },
    })
  })

  it('changes files through call, and refuses escapes with exit code 1', () => {
    expect(
      cli(
        'call',
        'edit',
        '{"file_path":"a.txt","old_string":"beta","new_string":"gamma"}',
        '-w',
        dir,
      ).code,
    ).toBe(0)
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('alpha\ngamma\n')
    const escape = cli('call', 'read', '{"file_path":"../../etc/passwd"}', '-w', dir)
    expect(escape.code).toBe(1)
    expect(escape.stdout).toContain('escapes the workspace root')
    expect(escape.stderr).toBe('error: permission_denied\n')
    expect(cli('call', 'bash', '{"command":"id"}', '-w', dir).code).toBe(1)
  })

  it('exits 2 on usage errors', () => {
    expect(cli('call', 'read', '{not json', '-w', dir).code).toBe(2)
    expect(cli('frobnicate', '-w', dir).code).toBe(2)
    expect(cli('tools', '-w', join(dir, 'missing')).code).toBe(2)
    expect(cli().code).toBe(2)
    expect(cli('--help').code).toBe(0)
  })
})
