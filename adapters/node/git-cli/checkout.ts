import type { GitCheckoutTarget, GitSignature } from '../../../src/index.ts'
import { who } from './common.ts'
import type { GitRunner } from './runner.ts'

/** `GitBackend.checkout`. */
export async function checkout(
  git: GitRunner,
  target: GitCheckoutTarget,
  signature: GitSignature,
): Promise<void> {
  const env = who(signature)
  if ('branch' in target)
    await git.ok(['checkout', '-q', target.branch, '--'], { env, changes: true })
  else await git.ok(['checkout', '-q', '--detach', target.detach, '--'], { env, changes: true })
}
