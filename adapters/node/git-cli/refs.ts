import type { GitBranch, GitHead, GitRemote, GitWorktree } from '../../../src/index.ts'
import { compareBytes, decoder, splitNul, ZERO_OID } from './common.ts'
import type { GitRunner } from './runner.ts'

async function headOid(git: GitRunner): Promise<string | null> {
  const r = await git.run(['rev-parse', '-q', '--verify', 'HEAD^{commit}'])
  return r.code === 0 ? decoder.decode(r.stdout).trim() : null
}

/** `GitBackend.head`. */
export async function head(git: GitRunner): Promise<GitHead> {
  const r = await git.run(['symbolic-ref', '-q', 'HEAD'])
  const ref = decoder.decode(r.stdout).trim()
  const branch = r.code === 0 && ref.startsWith('refs/heads/') ? ref.slice(11) : null
  return { branch, oid: await headOid(git) }
}

/** `GitBackend.resolveCommit`. */
export async function resolveCommit(git: GitRunner, ref: string): Promise<string | undefined> {
  const r = await git.run(['rev-parse', '-q', '--verify', '--end-of-options', `${ref}^{commit}`])
  return r.code === 0 ? decoder.decode(r.stdout).trim() : undefined
}

/** `GitBackend.branches`. */
export async function branches(git: GitRunner): Promise<GitBranch[]> {
  const lines = (
    await git.text(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/'])
  )
    .split('\n')
    .filter((l) => l.length > 0)
  return lines
    .map((line): GitBranch => {
      const space = line.indexOf(' ')
      return {
        oid: line.slice(0, space),
        name: line.slice(space + 1).replace(/^refs\/heads\//, ''),
      }
    })
    .sort((a, b) => compareBytes(a.name, b.name))
}

/** `GitBackend.createBranch`. */
export async function createBranch(git: GitRunner, name: string, oid: string): Promise<void> {
  await git.ok(['branch', name, oid], { changes: true })
}

/** `GitBackend.remotes`. */
export async function remotes(git: GitRunner): Promise<GitRemote[]> {
  const r = await git.run(['config', '-z', '--get-regexp', '^remote\\..*\\.url$'])
  if (r.code !== 0) return []
  return splitNul(r.stdout)
    .map((entry): GitRemote => {
      const newline = entry.indexOf('\n')
      const key = entry.slice(0, newline)
      return {
        name: key.slice('remote.'.length, -'.url'.length),
        url: entry.slice(newline + 1),
      }
    })
    .sort((a, b) => compareBytes(a.name, b.name))
}

/** `GitBackend.worktrees`. */
export async function worktrees(git: GitRunner): Promise<GitWorktree[]> {
  const records = splitNul(await git.ok(['worktree', 'list', '--porcelain', '-z']))
  const out: GitWorktree[] = []
  let current: GitWorktree | undefined
  for (const line of records) {
    if (line.startsWith('worktree ')) {
      current = { path: line.slice(9), head: null, branch: null, main: out.length === 0 }
      out.push(current)
    } else if (current !== undefined && line.startsWith('HEAD ')) {
      const oid = line.slice(5)
      current.head = oid === ZERO_OID ? null : oid
    } else if (current !== undefined && line.startsWith('branch ')) {
      current.branch = line.slice(7).replace(/^refs\/heads\//, '')
    }
  }
  return out
}
