import * as git from 'isomorphic-git'
import type { GitCommit } from '../../../workspace/git-backend.ts'
import { signatureOf, type RepoContext } from './context.ts'

/** `GitBackend.log`: up to `limit` commits from `start`, newest first, after `skip`. */
export async function log(
  repo: RepoContext,
  start: string,
  skip: number,
  limit: number,
): Promise<GitCommit[]> {
  const commits = await git.log({ ...repo.base(), ref: start, depth: skip + limit })
  return commits.slice(skip).map((c): GitCommit => ({
    oid: c.oid,
    parents: c.commit.parent,
    author: signatureOf(c.commit.author),
    committer: signatureOf(c.commit.committer),
    message: c.commit.message.replace(/\n+$/, ''),
  }))
}
