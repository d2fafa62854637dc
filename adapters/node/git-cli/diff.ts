import type { GitDiffFile, GitTreeChange } from '../../../src/index.ts'
import { compareBytes, readBlobs, sameBytes, splitNul, workFile, ZERO_OID } from './common.ts'
import type { GitRunner } from './runner.ts'

/** `GitBackend.treeChanges`: `ls-tree` from the empty tree, else `diff-tree`. */
export async function treeChanges(
  git: GitRunner,
  from: string | null,
  to: string,
): Promise<GitTreeChange[]> {
  if (from === null) {
    return splitNul(await git.ok(['ls-tree', '-r', '-z', '--name-only', '--end-of-options', to]))
      .map((path): GitTreeChange => ({ path, inTarget: true }))
      .sort((a, b) => compareBytes(a.path, b.path))
  }
  const parts = splitNul(
    await git.ok([
      'diff-tree',
      '-r',
      '-z',
      '--no-renames',
      '--name-status',
      '--end-of-options',
      from,
      to,
    ]),
  )
  const out: GitTreeChange[] = []
  for (let i = 0; i + 1 < parts.length; i += 2)
    out.push({ path: parts[i + 1]!, inTarget: parts[i] !== 'D' })
  return out.sort((a, b) => compareBytes(a.path, b.path))
}

interface RawRow {
  path: string
  oldMode: string
  newMode: string
  oldOid: string
  status: string
}

/** Rows of `diff-files`/`diff-index --raw -z`, one per path. */
async function rawRows(git: GitRunner, ref: string | undefined, prefix: string) {
  // Plumbing (diff-files, diff-index): porcelain `git diff` refreshes and rewrites the index
  // even with --no-optional-locks. Without a refresh, files whose stat changed but whose
  // content did not are listed too; they are dropped later by comparing bytes.
  const common = ['--raw', '-z', '--no-renames', '--abbrev=40', '--ignore-submodules=all']
  const args =
    ref === undefined
      ? ['diff-files', ...common]
      : ['diff-index', ...common, '--end-of-options', ref]
  args.push('--')
  if (prefix !== '') args.push(prefix)
  const parts = splitNul(await git.ok(args))
  const rows: RawRow[] = []
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const [oldMode, newMode, oldOid, , status] = parts[i]!.slice(1).split(' ')
    rows.push({
      path: parts[i + 1]!,
      oldMode: oldMode!,
      newMode: newMode!,
      oldOid: oldOid!,
      status: status!,
    })
  }
  const seen = new Set<string>()
  return rows.filter((r) => (seen.has(r.path) ? false : (seen.add(r.path), true)))
}

/** `GitBackend.diff`: working tree against the index (`ref` undefined) or a commit. */
export async function diff(
  git: GitRunner,
  ref: string | undefined,
  prefix: string,
): Promise<GitDiffFile[]> {
  const rows = await rawRows(git, ref, prefix)
  const blobs = await readBlobs(git, [
    ...new Set(rows.filter((r) => r.status !== 'U' && r.oldOid !== ZERO_OID).map((r) => r.oldOid)),
  ])
  const out: GitDiffFile[] = []
  for (const r of rows) {
    if (r.status === 'U') {
      out.push({ path: r.path, old: null, new: null, unmerged: true })
      continue
    }
    const old =
      r.oldOid === ZERO_OID || r.oldMode === '000000'
        ? null
        : { mode: r.oldMode, oid: r.oldOid, data: blobs.get(r.oldOid)! }
    const data = r.newMode === '000000' ? undefined : await workFile(git.root, r.path)
    const side = data === undefined ? null : { mode: r.newMode, data }
    if (old === null && side === null) continue
    if (old !== null && side !== null && old.mode === side.mode && sameBytes(old.data, side.data))
      continue
    out.push({ path: r.path, old, new: side })
  }
  return out.sort((a, b) => compareBytes(a.path, b.path))
}
