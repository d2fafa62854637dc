import * as git from 'isomorphic-git'
import type { GitAddedPath, GitSignature } from '../../../workspace/git-backend.ts'
import { compareBytes, inPrefix, offsetOfTz } from '../git-text.ts'
import type { RepoContext } from './context.ts'

/** `GitBackend.init`. */
export async function init(repo: RepoContext, defaultBranch: string): Promise<void> {
  await git.init({ fs: repo.fs, dir: repo.dir, defaultBranch })
  repo.invalidate()
}

/** `GitBackend.add`: stage `prefix`, adding new and modified files and removing deleted ones. */
export async function add(repo: RepoContext, prefix: string): Promise<GitAddedPath[]> {
  const matrix = await git.statusMatrix({
    ...repo.base(),
    ...(prefix === '' ? {} : { filepaths: [prefix] }),
  })
  const out: GitAddedPath[] = []
  const conflicts = await repo.unmerged()
  for (const [path, , work, stage] of matrix) {
    if (!inPrefix(path, prefix)) continue
    if (work === 0) {
      if (stage !== 0) {
        await git.remove({ ...repo.base(), filepath: path })
        out.push({ path, action: 'remove' })
      }
      continue
    }
    const same = (work === 1 && stage === 1) || (work === 2 && stage === 2)
    if (same && !conflicts.has(path)) continue
    await git.add({ ...repo.base(), filepath: path })
    out.push({ path, action: 'add' })
  }
  repo.invalidate()
  return out.sort((a, b) => compareBytes(a.path, b.path))
}

/** `GitBackend.commit`: commit the index on HEAD. */
export async function commit(
  repo: RepoContext,
  message: string,
  who: GitSignature,
): Promise<string> {
  const person = {
    name: who.name,
    email: who.email,
    timestamp: who.timestamp,
    timezoneOffset: offsetOfTz(who.tz),
  }
  const oid = await git.commit({ ...repo.base(), message, author: person, committer: person })
  repo.invalidate()
  return oid
}
