import * as git from 'isomorphic-git'
import type { GitCheckoutTarget, GitSignature } from '../../../workspace/git-backend.ts'
import { encoder, ZERO_OID, type RepoContext } from './context.ts'

/** `GitBackend.checkout`, with the HEAD reflog entry git writes. */
export async function checkout(
  repo: RepoContext,
  target: GitCheckoutTarget,
  who: GitSignature,
): Promise<void> {
  const ref = 'branch' in target ? target.branch : target.detach
  const before = await repo.headOid()
  const from =
    (await git.currentBranch({ ...repo.base(), fullname: false, test: false })) ?? before ?? 'HEAD'
  await git.checkout({ ...repo.base(), ref })
  // The HEAD reflog entry git writes (git branch reads it for "HEAD detached at").
  const after = (await repo.headOid()) ?? ZERO_OID
  const log = (await repo.readText(`${repo.gitdir}/logs/HEAD`)) ?? ''
  await repo.writeWorkFile(
    '.git/logs/HEAD',
    encoder.encode(
      `${log}${before ?? ZERO_OID} ${after} ${who.name} <${who.email}> ${who.timestamp} ${who.tz}\tcheckout: moving from ${from} to ${ref}\n`,
    ),
  )
  repo.invalidate()
}
