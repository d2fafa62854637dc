// Helpers of the git tool checked against the git CLI itself.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { formatDate } from '../../src/tools/git/git-format.ts'
import {
  blobOid,
  compareBytes,
  isBinary,
  isValidBranchName,
  offsetOfTz,
  tzOfOffset,
} from '../../src/tools/git/git-text.ts'

const env = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' }
const gitAccepts = (name: string) => {
  try {
    execFileSync('git', ['check-ref-format', '--branch', name], { env, stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

describe('git text helpers', () => {
  it('accepts exactly the branch names git check-ref-format --branch accepts', () => {
    const names = [
      'main',
      'feature/x',
      'a.b',
      'v1.0-rc',
      'ünïcode',
      'x..y',
      '.hidden',
      'a/.b',
      'trailing/',
      '/leading',
      'end.',
      'x.lock',
      'a b',
      'a~b',
      'a^b',
      'a:b',
      'a?b',
      'a*b',
      'a[b',
      'a\\b',
      'a@{b',
      'a//b',
      'tab\there',
      'del\x7f',
    ]
    for (const name of names) expect(isValidBranchName(name), name).toBe(gitAccepts(name))
    expect(isValidBranchName('-x')).toBe(false)
    expect(isValidBranchName('HEAD')).toBe(false)
    expect(isValidBranchName('@')).toBe(false)
  })

  it('hashes blobs as git hash-object does', () => {
    for (const text of ['', 'hello\n', 'ü✓\n', 'x'.repeat(10_000)]) {
      const expected = execFileSync('git', ['hash-object', '--stdin'], { env, input: text })
        .toString()
        .trim()
      expect(blobOid(new TextEncoder().encode(text))).toBe(expected)
    }
  })

  it('formats dates as git log does, in the signature own zone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'isoagent-git-date-'))
    try {
      execFileSync('git', ['init', '-q'], { cwd: dir, env })
      const cases: { timestamp: number; tz: string }[] = []
      for (const tz of ['+0000', '+0200', '-0700', '+0530', '-1200', '+1345'])
        for (const timestamp of [86_400, 1_112_911_993, 1_700_000_000, 1_709_251_200])
          cases.push({ timestamp, tz })
      for (const { timestamp, tz } of cases) {
        const date = `@${timestamp} ${tz}`
        execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'x'], {
          cwd: dir,
          env: {
            ...env,
            GIT_AUTHOR_NAME: 'a',
            GIT_AUTHOR_EMAIL: 'b',
            GIT_COMMITTER_NAME: 'a',
            GIT_COMMITTER_EMAIL: 'b',
            GIT_AUTHOR_DATE: date,
            GIT_COMMITTER_DATE: date,
          },
        })
      }
      const dates = execFileSync('git', ['log', '--reverse', '--format=%ad'], { cwd: dir, env })
        .toString()
        .trimEnd()
        .split('\n')
      expect(dates).toEqual(cases.map((c) => formatDate({ name: '', email: '', ...c })))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('converts zones both ways and orders by UTF-8 bytes', () => {
    for (const minutes of [-780, -330, -120, 0, 420, 720])
      expect(offsetOfTz(tzOfOffset(minutes))).toBe(minutes)
    expect(Object.is(offsetOfTz('+0000'), 0)).toBe(true)
    expect(tzOfOffset(-120)).toBe('+0200')
    expect(tzOfOffset(420)).toBe('-0700')
    expect(['b', 'ä', 'a', 'Z', '\u{1F600}', '\uFF21'].sort(compareBytes)).toEqual([
      'Z',
      'a',
      'b',
      'ä',
      '\uFF21',
      '\u{1F600}',
    ])
    expect(isBinary(new Uint8Array([1, 2, 0]))).toBe(true)
    expect(isBinary(new TextEncoder().encode('text\n'))).toBe(false)
  })
})
