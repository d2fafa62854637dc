import * as git from 'isomorphic-git'
import type { GitStatus, GitStatusEntry } from '../../../workspace/git-backend.ts'
import type { RepoContext } from './context.ts'
import { unmergedCode } from './index-file.ts'
import { upstreamOf } from './upstream.ts'

/** `GitBackend.status`: HEAD, its upstream and the changed paths. */
export async function status(repo: RepoContext): Promise<GitStatus> {
  const now = await repo.head()
  const upstream = now.branch === null ? null : await upstreamOf(repo, now.branch, now.oid)
  return { head: now, upstream, entries: await worktreeStatus(repo) }
}

async function worktreeStatus(repo: RepoContext): Promise<GitStatusEntry[]> {
  const conflicts = await repo.unmerged()
  const out: GitStatusEntry[] = []
  for (const [path, stages] of conflicts) {
    const code = unmergedCode(stages)
    out.push({ path, index: code[0]!, worktree: code[1]! })
  }
  // No index refresh: reading the status must not rewrite .git/index.
  const matrix = await git.statusMatrix({ ...repo.base(), refresh: false })
  for (const [path, head, work, stage] of matrix) {
    if (conflicts.has(path)) continue
    const entry = (index: string, worktree: string) => out.push({ path, index, worktree })
    if (head === 0) {
      if (stage === 0) {
        if (work !== 0) entry('?', '?')
      } else if (work === 0) entry('A', 'D')
      else entry('A', stage === 3 ? 'M' : ' ')
      continue
    }
    if (stage === 0) {
      entry('D', ' ')
      if (work !== 0) entry('?', '?')
      continue
    }
    const x = stage === 1 ? ' ' : 'M'
    const y =
      work === 0 ? 'D' : (stage === 1 && work === 2) || (stage === 3 && work !== 2) ? 'M' : ' '
    if (stage === 3 && work === 2) {
      // Staged and working tree both differ from HEAD; they may still differ from each other.
      entry(x, 'M')
      continue
    }
    if (x !== ' ' || y !== ' ') entry(x, y)
  }
  return out
}
