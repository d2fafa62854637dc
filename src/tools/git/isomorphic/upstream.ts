import * as git from 'isomorphic-git'
import type { GitUpstream } from '../../../workspace/git-backend.ts'
import { isNotFound, type RepoContext } from './context.ts'
import { REF_RULES, shortenRef, trackingRef } from './ref-names.ts'
import { packedRefs, readExactRef } from './refs.ts'

/** The upstream of `branch` at `oid` as `git status -b` reports it (see git's remote.c). */
export async function upstreamOf(
  repo: RepoContext,
  branch: string,
  oid: string | null,
): Promise<GitUpstream | null> {
  const config = (path: string) => git.getConfigAll({ fs: repo.fs, dir: repo.dir, path })
  const remote = (await config(`branch.${branch}.remote`)).at(-1)
  const merge = (await config(`branch.${branch}.merge`))[0]
  if (typeof remote !== 'string' || typeof merge !== 'string' || remote === '') return null
  const packed = await packedRefs(repo)
  let target: string | undefined
  if (remote === '.') {
    const found: string[] = []
    for (const rule of REF_RULES)
      if ((await readExactRef(repo, rule(merge), packed)) !== undefined) found.push(rule(merge))
    target = found.length === 1 ? found[0] : merge
  } else {
    const specs = (await config(`remote.${remote}.fetch`)).filter(
      (v): v is string => typeof v === 'string',
    )
    target = trackingRef(specs, merge)
  }
  if (target === undefined) return null
  const exists = async (name: string) => (await readExactRef(repo, name, packed)) !== undefined
  const name = await shortenRef(target, exists)
  const theirs = await readExactRef(repo, target, packed).then((o) =>
    o === undefined ? undefined : repo.peelToCommit(o),
  )
  if (theirs === undefined || oid === null) return { name, ahead: null, behind: null, gone: true }
  const [ahead, behind] = await aheadBehind(repo, oid, theirs)
  return { name, ahead, behind, gone: false }
}

const LEFT = 1
const RIGHT = 2
const BOTH = LEFT | RIGHT

/** A max-heap of commits by committer date, with each commit's side flags. */
class CommitQueue {
  readonly flags = new Map<string, number>()
  readonly dates = new Map<string, number>()
  readonly parents = new Map<string, string[]>()
  private readonly queued = new Set<string>()
  private readonly heap: string[] = []
  /** Queued commits not yet reachable from both sides. */
  fresh = 0

  constructor(private readonly repo: RepoContext) {}

  private before(a: string, b: string): boolean {
    return this.dates.get(a)! > this.dates.get(b)!
  }

  private async load(oid: string): Promise<void> {
    if (this.dates.has(oid)) return
    try {
      const { commit } = await git.readCommit({ ...this.repo.base(), oid })
      this.dates.set(oid, commit.committer.timestamp)
      this.parents.set(oid, commit.parent)
    } catch (error) {
      if (!isNotFound(error)) throw error
      // A commit missing from a shallow history ends the walk there.
      this.dates.set(oid, -Infinity)
      this.parents.set(oid, [])
    }
  }

  async mark(oid: string, flag: number): Promise<void> {
    const old = this.flags.get(oid) ?? 0
    const now = old | flag
    if (now === old) return
    this.flags.set(oid, now)
    if (this.queued.has(oid)) {
      if (now === BOTH) this.fresh--
      return
    }
    await this.load(oid)
    this.queued.add(oid)
    if (now !== BOTH) this.fresh++
    const heap = this.heap
    heap.push(oid)
    for (let i = heap.length - 1; i > 0;) {
      const up = (i - 1) >> 1
      if (!this.before(heap[i]!, heap[up]!)) break
      ;[heap[i], heap[up]] = [heap[up]!, heap[i]!]
      i = up
    }
  }

  pop(): string {
    const heap = this.heap
    const top = heap[0]!
    const last = heap.pop()!
    if (heap.length > 0) {
      heap[0] = last
      for (let i = 0; ;) {
        const l = 2 * i + 1
        const r = l + 1
        let best = i
        if (l < heap.length && this.before(heap[l]!, heap[best]!)) best = l
        if (r < heap.length && this.before(heap[r]!, heap[best]!)) best = r
        if (best === i) break
        ;[heap[i], heap[best]] = [heap[best]!, heap[i]!]
        i = best
      }
    }
    this.queued.delete(top)
    if (this.flags.get(top) !== BOTH) this.fresh--
    return top
  }
}

/** Commits reachable from `ours` only and from `theirs` only (`rev-list --left-right`). */
async function aheadBehind(
  repo: RepoContext,
  ours: string,
  theirs: string,
): Promise<[number, number]> {
  if (ours === theirs) return [0, 0]
  const queue = new CommitQueue(repo)
  await queue.mark(ours, LEFT)
  await queue.mark(theirs, RIGHT)
  // Walk newest first until every commit still queued is reachable from both sides.
  while (queue.fresh > 0) {
    const oid = queue.pop()
    const flag = queue.flags.get(oid)!
    for (const parent of queue.parents.get(oid)!) await queue.mark(parent, flag)
  }
  let ahead = 0
  let behind = 0
  for (const flag of queue.flags.values()) {
    if (flag === LEFT) ahead++
    else if (flag === RIGHT) behind++
  }
  return [ahead, behind]
}
