import type { GitAddedPath, GitSignature } from '../../../src/index.ts'
import { compareBytes, who, workFile } from './common.ts'
import type { GitRunner } from './runner.ts'
import { status } from './status.ts'

/** `GitBackend.init`. */
export async function init(git: GitRunner, defaultBranch: string): Promise<void> {
  await git.ok(['init', '-q', `--initial-branch=${defaultBranch}`], { changes: true })
}

/** `GitBackend.add`: what `add -A` will change (from the status), then `add -A`. */
export async function add(git: GitRunner, prefix: string): Promise<GitAddedPath[]> {
  const before = (await status(git)).entries.filter(
    (e) => prefix === '' || e.path === prefix || e.path.startsWith(`${prefix}/`),
  )
  const planned = new Map<string, GitAddedPath>()
  for (const e of before) {
    if (e.worktree === ' ') continue
    const action = e.worktree === 'D' ? 'remove' : 'add'
    if (e.index === 'U' || e.worktree === 'U' || e.index === e.worktree) {
      const exists = (await workFile(git.root, e.path)) !== undefined
      planned.set(e.path, { path: e.path, action: exists ? 'add' : 'remove' })
    } else planned.set(e.path, { path: e.path, action })
  }
  // Nothing to stage (also: an ignored path, which `git add` would refuse): as isomorphic-git.
  if (planned.size === 0) return []
  await git.ok(['add', '-A', '--', prefix === '' ? '.' : prefix], { changes: true })
  return [...planned.values()].sort((a, b) => compareBytes(a.path, b.path))
}

/** `GitBackend.commit`. */
export async function commit(
  git: GitRunner,
  message: string,
  signature: GitSignature,
): Promise<string> {
  await git.ok(
    ['commit', '-q', '--no-verify', '--cleanup=verbatim', '--allow-empty-message', '-F', '-'],
    { input: message, env: who(signature), changes: true },
  )
  return (await git.text(['rev-parse', 'HEAD'])).trim()
}
