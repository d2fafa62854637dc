// The same calls on the same repository through every backend: the git CLI and isomorphic-git
// on local disk, and isomorphic-git over the memory workspace. Outputs and metadata must be
// identical (apart from the backend's name and, for worktree, the root path).
import { afterAll, describe, expect, it } from 'vitest'
import type { ToolResult } from '../../adapters/index.ts'
import {
  cliTarget,
  git,
  isomorphicLocalTarget,
  memoryTarget,
  removeTemps,
  standardRepo,
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
})
