import * as git from 'isomorphic-git'
import type { GitStatus, GitStatusEntry } from '../../../workspace/git-backend.ts'
import { modeText, type FileMap, type RepoContext } from './context.ts'
import { parseIndex, unmergedCode, type IndexEntry, type ParsedIndex } from './index-file.ts'
import { upstreamOf } from './upstream.ts'
import { trackedStates, untrackedFiles, type WorkState } from './work-tree.ts'

/** `GitBackend.status`: HEAD, its upstream and the changed paths. */
export async function status(repo: RepoContext): Promise<GitStatus> {
  const now = await repo.head()
  const upstream = now.branch === null ? null : await upstreamOf(repo, now.branch, now.oid)
  const index = await readIndex(repo)
  const entries =
    index === undefined ? await matrixStatus(repo) : await indexStatus(repo, index, now.oid)
  return { head: now, upstream, entries }
}

/** The parsed index and the second it was written; empty when there is none. */
async function readIndex(
  repo: RepoContext,
): Promise<(ParsedIndex & { seconds: number }) | undefined> {
  const path = `${repo.gitdir}/index`
  const bytes = await repo.readBytes(path)
  if (bytes === undefined)
    return { entries: new Map(), unmerged: new Map(), cacheTree: new Map(), seconds: 0 }
  const parsed = parseIndex(bytes)
  if (parsed === undefined) return undefined
  const stat = await repo.fs.promises.stat(path)
  return { ...parsed, seconds: Math.floor(stat.mtimeMs / 1000) }
}

/** HEAD's files where they may differ from the index, and the directories where they cannot. */
interface HeadSide {
  files: FileMap
  /** Directories whose HEAD tree is the one the index's cache tree records ('' = all). */
  same: Set<string>
}

/**
 * HEAD's tree against the index, as git does it: a directory whose tree id equals the one the
 * index's cache tree holds for it has the same files in both and is not read; the others are
 * read, level by level.
 */
async function headSide(
  repo: RepoContext,
  oid: string | null,
  cacheTree: Map<string, string>,
): Promise<HeadSide> {
  const out: HeadSide = { files: new Map(), same: new Set() }
  if (oid === null) return out
  const visit = async (treeOid: string, prefix: string): Promise<void> => {
    if (cacheTree.get(prefix) === treeOid) {
      out.same.add(prefix)
      return
    }
    const { tree } = await git.readTree({ ...repo.base(), oid: treeOid })
    const below: Promise<void>[] = []
    for (const entry of tree) {
      const path = prefix === '' ? entry.path : `${prefix}/${entry.path}`
      if (entry.type === 'tree') below.push(visit(entry.oid, path))
      else out.files.set(path, { oid: entry.oid, mode: entry.mode })
    }
    await Promise.all(below)
  }
  const { commit } = await git.readCommit({ ...repo.base(), oid })
  await visit(commit.tree, '')
  return out
}

/** Whether `path` lies in one of the directories of `same`. */
function inSame(same: Set<string>, path: string): boolean {
  if (same.size === 0) return false
  if (same.has('')) return true
  for (let slash = path.indexOf('/'); slash > 0; slash = path.indexOf('/', slash + 1))
    if (same.has(path.slice(0, slash))) return true
  return false
}

/** Every directory above `paths`. */
function directoriesOf(paths: Iterable<string>): Set<string> {
  const out = new Set<string>()
  for (const path of paths) {
    for (let slash = path.lastIndexOf('/'); slash > 0; slash = path.lastIndexOf('/', slash - 1)) {
      const dir = path.slice(0, slash)
      if (out.has(dir)) break
      out.add(dir)
    }
  }
  return out
}

/**
 * The changed paths as git finds them: HEAD's tree against the index's entries, and the index
 * against the working tree by the stat data the index holds (hashing only files whose stat
 * changed or that are racily clean), plus the untracked files. Nothing is written.
 */
async function indexStatus(
  repo: RepoContext,
  index: ParsedIndex & { seconds: number },
  headOid: string | null,
): Promise<GitStatusEntry[]> {
  const filemode =
    (await git.getConfig({ fs: repo.fs, dir: repo.dir, path: 'core.filemode' })) !== false
  const [head, states] = await Promise.all([
    headSide(repo, headOid, index.cacheTree),
    trackedStates(repo, [...index.entries.values()], index.seconds, filemode),
  ])
  const tracked = new Set([...index.entries.keys(), ...index.unmerged.keys()])
  const untracked = await untrackedFiles(repo, tracked, directoriesOf(tracked))
  const out: GitStatusEntry[] = []
  for (const [path, stages] of index.unmerged) {
    const code = unmergedCode(stages)
    out.push({ path, index: code[0]!, worktree: code[1]! })
  }
  for (const path of new Set([...head.files.keys(), ...index.entries.keys()])) {
    if (index.unmerged.has(path)) continue
    const x = inSame(head.same, path)
      ? ' '
      : indexLetter(head.files.get(path), index.entries.get(path))
    const y = worktreeLetter(states.get(path))
    if (x !== ' ' || y !== ' ') out.push({ path, index: x, worktree: y })
  }
  for (const path of untracked) out.push({ path, index: '?', worktree: '?' })
  return out
}

function indexLetter(head: { oid: string; mode: string } | undefined, entry?: IndexEntry): string {
  if (entry === undefined) return head === undefined ? ' ' : 'D'
  if (head === undefined) return 'A'
  return head.oid !== entry.oid || head.mode !== modeText(entry.mode) ? 'M' : ' '
}

function worktreeLetter(state: WorkState | undefined): string {
  if (state === 'deleted') return 'D'
  if (state === 'modified') return 'M'
  return ' '
}

/** The changed paths by isomorphic-git's `statusMatrix`, for an index this reader cannot parse. */
async function matrixStatus(repo: RepoContext): Promise<GitStatusEntry[]> {
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
