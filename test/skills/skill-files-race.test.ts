// Host skill files under attack by a concurrent process: while a child process keeps renaming new
// contents over one bundled file and swapping another between a regular file and a symlink to a
// secret outside the skill's folder, two sessions read both through `skill://` at once. Every
// answer is the old or the new content, or a typed refusal; never the secret, never a throw.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace, type Session } from '../../adapters/index.ts'
import { hostSkillDirs } from '../../adapters/node/index.ts'

const SWAPPER = `
const { renameSync, symlinkSync, writeFileSync, rmSync } = require('node:fs')
const [dir, secret] = process.argv.slice(1)
let n = 0
const stopAt = Date.now() + 60_000
while (Date.now() < stopAt) {
  n++
  writeFileSync(dir + '/a.tmp', n % 2 ? 'alpha-version\\n' : 'beta-version\\n')
  renameSync(dir + '/a.tmp', dir + '/a.txt')
  rmSync(dir + '/b.tmp', { force: true })
  if (n % 2) symlinkSync(secret, dir + '/b.tmp')
  else writeFileSync(dir + '/b.tmp', 'inside-b\\n')
  renameSync(dir + '/b.tmp', dir + '/b.txt')
  if (n === 50) process.stdout.write('swapping\\n')
}
`

describe('skill:// reads while a process swaps the files (Node)', () => {
  let host = ''
  let outside = ''
  let swapper: ChildProcess | undefined
  const sessions: Session[] = []
  beforeAll(async () => {
    host = mkdtempSync(join(tmpdir(), 'isoagent-skill-race-host-'))
    outside = mkdtempSync(join(tmpdir(), 'isoagent-skill-race-out-'))
    mkdirSync(join(host, 'race/refs'), { recursive: true })
    writeFileSync(
      join(host, 'race/SKILL.md'),
      '---\nname: race\ndescription: Files that change under the reader.\n---\nRead refs/.\n',
    )
    writeFileSync(join(host, 'race/refs/a.txt'), 'alpha-version\n')
    writeFileSync(join(host, 'race/refs/b.txt'), 'inside-b\n')
    writeFileSync(join(outside, 'secret'), 'HOST-SECRET\n')
    for (let i = 0; i < 2; i++)
      sessions.push(
        await Agent.create().session(memoryWorkspace({}), {
          skills: { host: hostSkillDirs(host) },
        }),
      )
  })
  afterAll(async () => {
    swapper?.kill('SIGKILL')
    for (const s of sessions) await s.close()
    for (const d of [host, outside]) rmSync(d, { recursive: true, force: true })
  })

  it('2,000 reads from two sessions: old or new bytes, or a typed refusal; never outside', async () => {
    swapper = spawn(
      process.execPath,
      ['-e', SWAPPER, join(host, 'race/refs'), join(outside, 'secret')],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    await new Promise<void>((resolve) => swapper!.stdout!.once('data', () => resolve()))
    const seen = new Map<string, number>()
    const note = (key: string) => seen.set(key, (seen.get(key) ?? 0) + 1)
    for (let batch = 0; batch < 100; batch++) {
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) => {
          const file = i % 2 === 0 ? 'a' : 'b'
          return sessions[i % 4 < 2 ? 0 : 1]!.tool('read', {
            file_path: `skill://race/refs/${file}.txt`,
          }).then((reply) => ({ file, reply }))
        }),
      )
      for (const { file, reply } of replies) {
        expect(reply.output).not.toContain('HOST-SECRET')
        if (reply.exitCode === 0) {
          const text = reply.output.replace(/^ *1\t/, '')
          if (file === 'a') expect(['alpha-version', 'beta-version']).toContain(text)
          else expect(text).toBe('inside-b')
          note(`${file}:${text}`)
        } else {
          expect(reply.errorKind?.type, reply.output).toMatch(/^(permission_denied|not_found)$/)
          note(`${file}:${reply.errorKind!.type}`)
        }
      }
    }
    // The swapper really raced the reads: both versions of a.txt were seen, and b.txt was
    // refused as a link out at least once.
    expect(seen.get('a:alpha-version')).toBeGreaterThan(0)
    expect(seen.get('a:beta-version')).toBeGreaterThan(0)
    expect(seen.get('b:permission_denied') ?? 0).toBeGreaterThan(0)
  }, 120_000)
})
