import * as git from 'isomorphic-git'
import type { GitBranch, GitRemote, GitWorktree } from '../../../workspace/git-backend.ts'
import {
  autoAbbrevLength,
  configuredAbbrev,
  neighboursIn,
  packIndexOids,
  uniqueAbbrevLength,
  type SortedOids,
} from '../abbrev.ts'
import { compareBytes } from '../git-text.ts'
import { isNotFound, type RepoContext } from './context.ts'
import { isSafeRefName } from './ref-names.ts'

/** `name -> oid` of `packed-refs` (peeled lines skipped). */
export async function packedRefs(repo: RepoContext): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  for (const line of ((await repo.readText(`${repo.gitdir}/packed-refs`)) ?? '').split('\n')) {
    const m = /^([0-9a-f]{40}) (\S+)$/.exec(line)
    if (m !== null) out.set(m[2]!, m[1]!)
  }
  return out
}

/**
 * The object id ref `name` holds, read as exactly that name (loose or packed, following
 * symbolic refs), without the name expansion `resolveRef` applies.
 */
export async function readExactRef(
  repo: RepoContext,
  name: string,
  packed: Map<string, string>,
  depth = 0,
): Promise<string | undefined> {
  if (depth > 5 || !isSafeRefName(name)) return undefined
  const loose = await repo.readText(`${repo.gitdir}/${name}`).catch(() => undefined)
  if (loose !== undefined) {
    const text = loose.trim()
    if (/^[0-9a-f]{40}$/.test(text)) return text
    if (text.startsWith('ref: ')) return readExactRef(repo, text.slice(5).trim(), packed, depth + 1)
    return undefined
  }
  return packed.get(name)
}

/** `GitBackend.resolveCommit`. */
export async function resolveCommit(repo: RepoContext, ref: string): Promise<string | undefined> {
  let oid: string | undefined
  try {
    oid = await git.resolveRef({ ...repo.base(), ref })
  } catch (error) {
    if (!isNotFound(error) && (error as { code?: unknown }).code !== 'InvalidRefNameError')
      throw error
  }
  if (oid === undefined && /^[0-9a-f]{4,40}$/.test(ref)) {
    try {
      oid = await git.expandOid({ ...repo.base(), oid: ref })
    } catch (error) {
      if (!isNotFound(error) && (error as { code?: unknown }).code !== 'AmbiguousError') throw error
    }
  }
  if (oid === undefined) return undefined
  return repo.peelToCommit(oid)
}

/** The sorted object tables of the repository's packs (an index without its pack is skipped). */
async function packIndexes(repo: RepoContext): Promise<SortedOids[]> {
  const names = await repo.listDir(`${repo.gitdir}/objects/pack`)
  const present = new Set(names)
  const out: SortedOids[] = []
  for (const name of names.filter((n) => n.endsWith('.idx')).sort(compareBytes)) {
    if (!present.has(`${name.slice(0, -4)}.pack`)) continue
    const known = repo.packOids.get(name)
    if (known !== undefined) {
      out.push(known)
      continue
    }
    const bytes = await repo.readBytes(`${repo.gitdir}/objects/pack/${name}`)
    if (bytes === undefined) continue
    try {
      const oids = packIndexOids(bytes)
      repo.packOids.set(name, oids)
      out.push(oids)
    } catch {
      // git skips a pack index it cannot read.
    }
  }
  return out
}

/** `GitBackend.abbreviate`. */
export async function abbreviate(repo: RepoContext, oids: readonly string[]): Promise<string[]> {
  if (oids.length === 0) return []
  const { fs, dir } = repo
  const setting = configuredAbbrev(await git.getConfig({ fs, dir, path: 'core.abbrev' }))
  if (setting >= 40) return [...oids]
  const packs = await packIndexes(repo)
  const count = packs.reduce((sum, p) => sum + p.count, 0)
  const minimum = setting < 0 ? autoAbbrevLength(count) : setting
  const loose = new Map<string, string[]>()
  const out: string[] = []
  for (const oid of oids) {
    let length = uniqueAbbrevLength(
      oid,
      minimum,
      packs.flatMap((p) => neighboursIn(p, oid)),
    )
    const fan = oid.slice(0, 2)
    let names = loose.get(fan)
    if (names === undefined) {
      names = (await repo.listDir(`${repo.gitdir}/objects/${fan}`))
        .filter((n) => /^[0-9a-f]{38}$/.test(n))
        .map((n) => `${fan}${n}`)
      loose.set(fan, names)
    }
    length = uniqueAbbrevLength(oid, length, names)
    out.push(oid.slice(0, length))
  }
  return out
}

/** `GitBackend.branches`. */
export async function branches(repo: RepoContext): Promise<GitBranch[]> {
  const names = await git.listBranches({ ...repo.base() })
  const out: GitBranch[] = []
  for (const name of names) {
    if (name === 'HEAD') continue
    out.push({ name, oid: await git.resolveRef({ ...repo.base(), ref: `refs/heads/${name}` }) })
  }
  return out.sort((a, b) => compareBytes(a.name, b.name))
}

/** `GitBackend.createBranch`. */
export async function createBranch(repo: RepoContext, name: string, oid: string): Promise<void> {
  await git.writeRef({ ...repo.base(), ref: `refs/heads/${name}`, value: oid })
  repo.invalidate()
}

/** `GitBackend.remotes`. */
export async function remotes(repo: RepoContext): Promise<GitRemote[]> {
  const listed = await git.listRemotes({ ...repo.base() })
  return listed
    .map((r): GitRemote => ({ name: r.remote, url: r.url }))
    .sort((a, b) => compareBytes(a.name, b.name))
}

/** `GitBackend.worktrees`. */
export async function worktrees(repo: RepoContext): Promise<GitWorktree[]> {
  const { gitdir } = repo
  const main = await repo.head()
  const out: GitWorktree[] = [
    { path: repo.displayRoot, head: main.oid, branch: main.branch, main: true },
  ]
  let ids: string[] = []
  try {
    ids = (await repo.fs.promises.readdir(`${gitdir}/worktrees`)).sort(compareBytes)
  } catch (error) {
    if (!isNotFound(error) && (error as { code?: unknown }).code !== 'ENOTDIR') throw error
  }
  for (const id of ids) {
    const pointer = (await repo.readText(`${gitdir}/worktrees/${id}/gitdir`))?.trim()
    const headText = (await repo.readText(`${gitdir}/worktrees/${id}/HEAD`))?.trim()
    if (pointer === undefined || headText === undefined) continue
    const path = pointer.replace(/\/\.git$/, '')
    if (headText.startsWith('ref: ')) {
      const ref = headText.slice(5)
      let oid: string | null = null
      try {
        oid = await git.resolveRef({ ...repo.base(), ref })
      } catch (error) {
        if (!isNotFound(error)) throw error
      }
      out.push({ path, head: oid, branch: ref.replace(/^refs\/heads\//, ''), main: false })
    } else out.push({ path, head: headText, branch: null, main: false })
  }
  return out
}
