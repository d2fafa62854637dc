// The same calls on the same repository through every backend: the git CLI and isomorphic-git
// on local disk, and isomorphic-git over the memory workspace. Outputs and metadata must be
// identical (apart from the backend's name and, for worktree, the root path).
import { afterAll, describe, expect, it } from 'vitest'
import type { ToolResult } from '../../adapters/index.ts'
import {
  cliTarget,
  git,
  isomorphicLocalTarget,
  largeRepo,
  memoryTarget,
  removeTemps,
  standardRepo,
  withOrigin,
  write,
  type GitTargetHandle,
} from './git-fixture.ts'

const CALLS: [string, Record<string, unknown>][] = [
  ['status', {}],
  ['status', { limit: 2 }],
  ['log', {}],
  ['log', { ref: 'feature', limit: 4 }],
  ['diff', {}],
  ['diff', { ref: 'v1.0~2' }],
  ['diff', { max_bytes: 300 }],
  ['diff', { path: 'src' }],
  ['branch', {}],
  ['remote', {}],
  ['stash', { subcommand: 'list' }],
  ['checkout', { ref: 'feature' }],
  ['log', { ref: 'nope' }],
  ['diff', { path: '../x' }],
]

function comparable(result: ToolResult) {
  const { backend: _backend, ...metadata } = result.metadata ?? {}
  return { output: result.output, exitCode: result.exitCode, errorKind: result.errorKind, metadata }
}

describe('every backend gives the same results', () => {
  const handles: GitTargetHandle[] = []
  afterAll(async () => {
    for (const h of handles) await h.close()
    removeTemps()
  })

  it('for status, log, diff, branch, remote, stash list, checkout and bad input', async () => {
    const repo = standardRepo()
    write(repo, 'src/util.js', 'changed\n')
    write(repo, 'README.md', '# staged\n')
    git(repo, 'add', 'README.md')
    write(repo, 'new.txt', 'untracked\n')
    const results: Record<string, ReturnType<typeof comparable>[]> = {}
    for (const target of [cliTarget, isomorphicLocalTarget, memoryTarget]) {
      const handle = await target.open(repo)
      handles.push(handle)
      const list: ReturnType<typeof comparable>[] = []
      for (const [command, args] of CALLS)
        list.push(comparable(await handle.session.git(command, args)))
      results[target.name] = list
    }
    const [cli, ...others] = Object.values(results)
    expect(cli!.filter((r) => r.exitCode === 0).length).toBe(CALLS.length - 2)
    for (const other of others) expect(other).toEqual(cli)
  })

  /** The results of `calls` on a copy of `repo` through each backend, the CLI's first. */
  async function throughEach(repo: string, calls: [string, Record<string, unknown>][]) {
    const results: ReturnType<typeof comparable>[][] = []
    for (const target of [cliTarget, isomorphicLocalTarget, memoryTarget]) {
      const handle = await target.open(repo)
      handles.push(handle)
      const list: ReturnType<typeof comparable>[] = []
      for (const [command, args] of calls)
        list.push(comparable(await handle.session.git(command, args)))
      results.push(list)
    }
    return results
  }

  it('for the upstream of status (ahead and behind) and abbreviated ids', async () => {
    const repo = standardRepo()
    withOrigin(repo)
    git(repo, 'reset', '-q', '--hard', 'HEAD~2')
    write(repo, 'ahead.txt', 'ahead\n')
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', 'Ahead')
    const [cli, ...others] = await throughEach(repo, [
      ['status', {}],
      ['checkout', { ref: 'feature' }],
      ['status', {}],
    ])
    expect(cli![0]!.output).toBe('## main...origin/main [ahead 1, behind 2]')
    expect(cli![0]!.metadata.upstream).toEqual({
      name: 'origin/main',
      ahead: 1,
      behind: 2,
      gone: false,
    })
    expect(cli![2]!.metadata.upstream).toBeNull()
    for (const other of others) expect(other).toEqual(cli)

    const big = largeRepo()
    write(big, 'src/app.js', 'changed\n')
    const [bigCli, ...bigOthers] = await throughEach(big, [
      ['diff', {}],
      ['log', {}],
      ['worktree', {}],
      ['add', {}],
      ['stash', {}],
    ])
    expect(bigCli![0]!.output).toMatch(/^index [0-9a-f]{8}\.\.[0-9a-f]{8} 100644$/m)
    expect(bigCli![4]!.output).toMatch(/WIP on main: [0-9a-f]{8} Large commit$/)
    for (const other of bigOthers) {
      expect(other.slice(0, 2)).toEqual(bigCli!.slice(0, 2))
      // worktree shows each backend's own root path; a stash commit's id has the time in it.
      expect(other[2]!.output.split(' ').at(-2)).toBe(bigCli![2]!.output.split(' ').at(-2))
      expect(other[3]).toEqual(bigCli![3])
      expect(other[4]!.output).toBe(bigCli![4]!.output)
    }
  })
})
