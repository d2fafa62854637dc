// Racy git: a file rewritten without a size change in the second its index entry was written
// keeps the stat data the index holds, so only its content tells it changed. git hashes every
// entry whose mtime is not older than the index file; both backends must report what git does.
import { createHash } from 'node:crypto'
import { readFileSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Agent, type Session } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import { AUTHOR, git, removeTemps, standardRepo, write } from './git-fixture.ts'

/**
 * `path` holds `now` on disk while the index records `recorded` (same size) with the file's
 * exact stat data, and the index file was written in the same second as the file's mtime.
 */
function racilyClean(dir: string, path: string, recorded: string, now: string): void {
  expect(Buffer.byteLength(recorded)).toBe(Buffer.byteLength(now))
  const second = Math.floor(Date.now() / 1000) + 100
  write(dir, path, now)
  utimesSync(join(dir, path), second, second)
  git(dir, 'add', path)
  const blob = git(dir, 'hash-object', '-w', '--', writeTemp(dir, recorded)).trim()
  const nowOid = git(dir, 'rev-parse', `:${path}`).trim()
  const indexPath = join(dir, '.git', 'index')
  const index = Buffer.from(readFileSync(indexPath))
  const at = index.indexOf(Buffer.from(nowOid, 'hex'))
  expect(at).toBeGreaterThan(12)
  Buffer.from(blob, 'hex').copy(index, at)
  createHash('sha1')
    .update(index.subarray(0, index.length - 20))
    .digest()
    .copy(index, index.length - 20)
  writeFileSync(indexPath, index)
  utimesSync(indexPath, second + 0.5, second + 0.5)
}

function writeTemp(dir: string, content: string): string {
  const path = join(dir, '.git', 'racy-blob')
  writeFileSync(path, content)
  return path
}

describe('racy git: a same-size change in the second of the index write is seen', () => {
  const sessions: Session[] = []
  afterAll(async () => {
    for (const session of sessions) await session.close()
    removeTemps()
  })

  for (const mode of ['cli', 'isomorphic'] as const) {
    it(`through the ${mode} backend, like git`, async () => {
      // In place (a copy would not keep the timestamps), ours first: git's own status
      // refreshes the index.
      const repo = standardRepo()
      racilyClean(repo, 'docs/guide.txt', 'guide\n', 'GUIDE\n')
      const session = await Agent.create().session(localWorkspace(repo, { git: mode }), {
        gitAuthor: AUTHOR,
      })
      sessions.push(session)
      const status = await session.git('status')
      expect(status.exitCode, status.output).toBe(0)
      const oracle = git(repo, 'status', '--porcelain', '-b', '-uall')
      expect(oracle).toContain('\n M docs/guide.txt\n')
      expect(`${status.output}\n`).toBe(oracle)
    })
  }
})
