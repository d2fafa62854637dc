import type { GitHead, GitStatus, GitStatusEntry } from '../../../src/index.ts'
import { splitNul } from './common.ts'
import type { GitRunner } from './runner.ts'

/** `GitBackend.status`: one `git status --porcelain=v2 --branch -z`, parsed. */
export async function status(git: GitRunner): Promise<GitStatus> {
  const records = splitNul(
    await git.ok([
      'status',
      '--porcelain=v2',
      '--branch',
      '-z',
      '--untracked-files=all',
      '--no-renames',
    ]),
  )
  const head: GitHead = { branch: null, oid: null }
  let upstreamName: string | undefined
  let counts: [number, number] | undefined
  const out: GitStatusEntry[] = []
  const letter = (c: string) => (c === '.' ? ' ' : c)
  for (const record of records) {
    if (record.startsWith('# branch.oid ')) {
      const oid = record.slice('# branch.oid '.length)
      head.oid = oid === '(initial)' ? null : oid
    } else if (record.startsWith('# branch.head ')) {
      const branch = record.slice('# branch.head '.length)
      head.branch = branch === '(detached)' ? null : branch
    } else if (record.startsWith('# branch.upstream ')) {
      upstreamName = record.slice('# branch.upstream '.length)
    } else if (record.startsWith('# branch.ab ')) {
      const m = /^# branch\.ab \+(\d+) -(\d+)$/.exec(record)
      if (m !== null) counts = [Number(m[1]), Number(m[2])]
    } else if (record.startsWith('1 ')) {
      const fields = record.split(' ')
      const path = fields.slice(8).join(' ')
      const xy = fields[1]!
      out.push({ path, index: letter(xy[0]!), worktree: letter(xy[1]!) })
    } else if (record.startsWith('u ')) {
      const fields = record.split(' ')
      const xy = fields[1]!
      out.push({ path: fields.slice(10).join(' '), index: xy[0]!, worktree: xy[1]! })
    } else if (record.startsWith('? ')) {
      out.push({ path: record.slice(2), index: '?', worktree: '?' })
    }
  }
  // A detached HEAD has no upstream in `git status -b` (porcelain v2 may name one).
  const upstream: GitStatus['upstream'] =
    head.branch === null || upstreamName === undefined
      ? null
      : counts === undefined
        ? { name: upstreamName, ahead: null, behind: null, gone: true }
        : { name: upstreamName, ahead: counts[0], behind: counts[1], gone: false }
  return { head, upstream, entries: out }
}
