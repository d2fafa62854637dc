import * as git from 'isomorphic-git'
import type { GitDiffFile, GitTreeChange } from '../../../workspace/git-backend.ts'
import { compareBytes, inPrefix } from '../git-text.ts'
import type { RepoContext } from './context.ts'

/** `GitBackend.diff`: working tree against the index (`ref` undefined) or a commit. */
export async function diff(
  repo: RepoContext,
  ref: string | undefined,
  prefix: string,
): Promise<GitDiffFile[]> {
  const conflicts = await repo.unmerged()
  const out: GitDiffFile[] = []
  for (const path of conflicts.keys())
    if (inPrefix(path, prefix)) out.push({ path, old: null, new: null, unmerged: true })
  const index = await repo.filesOf(git.STAGE(), prefix)
  const before = ref === undefined ? index : await repo.treeFiles(ref, prefix)
  const paths = new Set([...before.keys(), ...(ref === undefined ? [] : index.keys())])
  for (const path of paths) {
    if (conflicts.has(path)) continue
    const old = before.get(path)
    // Against a commit, a path that is not in the index counts as deleted, as in git.
    const data = ref !== undefined && !index.has(path) ? undefined : await repo.workFile(path)
    const mode = index.get(path)?.mode ?? old?.mode ?? '100644'
    const oldSide = old === undefined ? null : { ...old, data: await repo.readBlob(old.oid) }
    if (data === undefined) {
      if (oldSide !== null) out.push({ path, old: oldSide, new: null })
      continue
    }
    if (oldSide !== null && sameData(oldSide.data, data)) continue
    out.push({ path, old: oldSide, new: { mode, data } })
  }
  return out.sort((a, b) => compareBytes(a.path, b.path))
}

/** `GitBackend.treeChanges`: paths whose content differs between two commits. */
export async function treeChanges(
  repo: RepoContext,
  from: string | null,
  to: string,
): Promise<GitTreeChange[]> {
  const before = await repo.treeFiles(from)
  const after = await repo.treeFiles(to)
  const out: GitTreeChange[] = []
  for (const [path, entry] of after) {
    const old = before.get(path)
    if (old === undefined || old.oid !== entry.oid || old.mode !== entry.mode)
      out.push({ path, inTarget: true })
  }
  for (const path of before.keys()) if (!after.has(path)) out.push({ path, inTarget: false })
  return out.sort((a, b) => compareBytes(a.path, b.path))
}

function sameData(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
