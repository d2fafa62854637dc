// The git cases, run unchanged against every workspace that serves `git` (see *.test.ts here).
// The oracle is the real git CLI on the same repository: set up on disk, copied for the tool and
// for git, and compared output for output. Mutations are checked by letting git read the state
// the tool left behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ToolResult } from '../../adapters/index.ts'
import { encodeCursor } from '../../src/paging/cursor.ts'
import { tzOfOffset } from '../../src/tools/git/git-text.ts'
import {
  AUTHOR,
  COLLIDING_BLOBS,
  copyOf,
  filesOf,
  git,
  largeRepo,
  removeTemps,
  standardRepo,
  tempDir,
  withOrigin,
  write,
  type GitTarget,
  type GitTargetHandle,
} from './git-fixture.ts'

const open: GitTargetHandle[] = []

function expectOk(result: ToolResult): ToolResult {
  if (result.exitCode !== 0) throw new Error(`expected success, got: ${result.output}`)
  expect(result.errorKind).toBeUndefined()
  return result
}

function expectFailure(result: ToolResult, type: string): ToolResult {
  expect(result.exitCode, result.output).toBe(1)
  expect(result.errorKind?.type, result.output).toBe(type)
  return result
}

/** Text of a result without its paging line. */
const body = (output: string) => output.replace(/\n*\.\.\. \(more [^\n]*$/, '')

/** State of a repository as git sees it: HEAD, status, branches, stash, files. */
function stateOf(dir: string) {
  const files = filesOf(dir)
  const worktree: Record<string, string> = {}
  for (const [path, bytes] of Object.entries(files))
    if (!path.startsWith('.git/')) worktree[path] = Buffer.from(bytes).toString('hex')
  return {
    status: git(dir, 'status', '--porcelain', '-b', '-uall', '--no-renames'),
    head: git(dir, 'rev-parse', 'HEAD').trim(),
    branches: git(dir, 'branch'),
    stash: git(dir, 'stash', 'list', '--format=%gs'),
    index: git(dir, 'ls-files', '-s'),
    worktree,
  }
}

export function gitCases(target: GitTarget): void {
  describe(`git tool on ${target.name}`, () => {
    let repo: string

    beforeAll(() => {
      repo = standardRepo()
    })

    afterAll(async () => {
      for (const handle of open.splice(0)) await handle.close()
      removeTemps()
    })

    /** A copy of the standard repository after `setup`, for the oracle, and the target on it. */
    async function scenario(setup: (dir: string) => void = () => {}) {
      const oracle = copyOf(repo)
      setup(oracle)
      const handle = await target.open(oracle)
      open.push(handle)
      const call = (command: string, args: Record<string, unknown> = {}) =>
        handle.session.git(command, args)
      return { oracle, handle, call }
    }

    /** The tool result must fail with `type` and leave every byte of the workspace as it was. */
    async function refusedUnchanged(
      handle: GitTargetHandle,
      run: () => Promise<ToolResult>,
      type: string,
    ): Promise<ToolResult> {
      const before = filesOf(await handle.materialize())
      const result = expectFailure(await run(), type)
      const after = filesOf(await handle.materialize())
      const changed = Object.keys({ ...before, ...after }).filter(
        (path) =>
          Buffer.compare(Buffer.from(before[path] ?? []), Buffer.from(after[path] ?? [])) !== 0,
      )
      expect(changed, result.output).toEqual([])
      return result
    }

    it('is registered and reports its backend', async () => {
      const { handle, call } = await scenario()
      expect(handle.session.toolNames()).toContain('git')
      const result = expectOk(await call('status'))
      expect(result.metadata?.backend).toBe(target.backend)
    })

    describe('status', () => {
      it('matches git status --porcelain -b on a clean repository', async () => {
        const { oracle, call } = await scenario()
        const result = expectOk(await call('status'))
        expect(result.output + '\n').toBe(git(oracle, 'status', '--porcelain', '-b', '-uall'))
        expect(result.metadata).toMatchObject({ branch: 'main', clean: true, detached: false })
      })

      it('lists staged, unstaged, deleted and untracked paths like git', async () => {
        const { oracle, call } = await scenario((dir) => {
          write(dir, 'src/app.js', 'rewritten\n')
          write(dir, 'README.md', '# staged\n')
          git(dir, 'add', 'README.md')
          write(dir, 'README.md', '# staged and changed again\n')
          write(dir, 'new/deep/file.txt', 'untracked\n')
          write(dir, 'staged-new.txt', 'added\n')
          git(dir, 'add', 'staged-new.txt')
          git(dir, 'rm', '-q', 'docs/guide.txt')
          write(dir, 'build/out.txt', 'ignored\n')
          write(dir, 'src/util.js', 'x\n')
          git(dir, 'rm', '-q', '--cached', 'src/util.js')
        })
        const result = expectOk(await call('status'))
        const expected = git(oracle, 'status', '--porcelain', '-b', '-uall', '--no-renames')
        expect(result.output + '\n').toBe(expected)
        expect(result.metadata?.clean).toBe(false)
        expect(result.metadata?.entries).toContainEqual({
          path: 'README.md',
          index: 'M',
          worktree: 'M',
        })
      })

      it('pages entries with limit and cursor', async () => {
        const { oracle, call } = await scenario((dir) => {
          for (let i = 0; i < 7; i++) write(dir, `u${i}.txt`, `${i}\n`)
        })
        const all = git(oracle, 'status', '--porcelain', '-uall').trimEnd().split('\n')
        const seen: string[] = []
        let cursor: string | undefined
        do {
          const result = expectOk(await call('status', { limit: 3, ...(cursor ? { cursor } : {}) }))
          seen.push(...body(result.output).split('\n').slice(1))
          cursor = (result.metadata?.next_cursor as string | null) ?? undefined
        } while (cursor !== undefined)
        expect(seen).toEqual(all)
      })

      it('shows a detached HEAD and an unborn branch like git', async () => {
        const { oracle, call } = await scenario((dir) => {
          git(dir, 'checkout', '-q', '--detach', 'HEAD~2')
        })
        const result = expectOk(await call('status'))
        expect(result.output + '\n').toBe(git(oracle, 'status', '--porcelain', '-b'))
        expect(result.metadata?.detached).toBe(true)

        const fresh = tempDir()
        git(fresh, 'init', '-q', '--initial-branch=main')
        write(fresh, 'a.txt', 'a\n')
        const handle = await target.open(fresh)
        open.push(handle)
        const unborn = expectOk(await handle.session.git('status'))
        expect(unborn.output + '\n').toBe(git(fresh, 'status', '--porcelain', '-b', '-uall'))
      })

      describe('upstream', () => {
        /** The tool's status must be git's, and its metadata must carry `upstream`. */
        async function statusLikeGit(setup: (dir: string) => void, upstream: unknown) {
          const { oracle, call } = await scenario(setup)
          const result = expectOk(await call('status'))
          expect(result.output + '\n').toBe(git(oracle, 'status', '--porcelain', '-b', '-uall'))
          expect(result.metadata?.upstream).toEqual(upstream)
          return result
        }
        const tracking = (ahead: number, behind: number, name = 'origin/main') => ({
          name,
          ahead,
          behind,
          gone: false,
        })

        it('shows a pushed branch in sync with its remote-tracking branch', async () => {
          const result = await statusLikeGit(
            (dir) => {
              withOrigin(dir)
            },
            tracking(0, 0),
          )
          expect(result.output).toBe('## main...origin/main')
        })

        it('counts commits ahead, behind, and both', async () => {
          const commit = (dir: string, text: string) => {
            write(dir, 'local.txt', text)
            git(dir, 'add', '-A')
            git(dir, 'commit', '-q', '-m', `Local ${text}`)
          }
          const ahead = await statusLikeGit(
            (dir) => {
              withOrigin(dir)
              commit(dir, 'one\n')
            },
            tracking(1, 0),
          )
          expect(ahead.output).toBe('## main...origin/main [ahead 1]')
          const behind = await statusLikeGit(
            (dir) => {
              withOrigin(dir)
              git(dir, 'reset', '-q', '--hard', 'HEAD~2')
            },
            tracking(0, 2),
          )
          expect(behind.output).toBe('## main...origin/main [behind 2]')
          const both = await statusLikeGit(
            (dir) => {
              withOrigin(dir)
              git(dir, 'reset', '-q', '--hard', 'HEAD~2')
              commit(dir, 'diverged\n')
              write(dir, 'untracked.txt', 'x\n')
            },
            tracking(1, 2),
          )
          expect(both.output).toBe('## main...origin/main [ahead 1, behind 2]\n?? untracked.txt')
          await statusLikeGit(
            (dir) => {
              withOrigin(dir)
              commit(dir, 'packed\n')
              git(dir, 'pack-refs', '--all')
            },
            tracking(1, 0),
          )
        })

        it('says [gone] when the upstream ref is missing or the branch has no commits', async () => {
          const gone = await statusLikeGit(
            (dir) => {
              withOrigin(dir)
              git(dir, 'update-ref', '-d', 'refs/remotes/origin/main')
            },
            { name: 'origin/main', ahead: null, behind: null, gone: true },
          )
          expect(gone.output).toBe('## main...origin/main [gone]')
          const unborn = await statusLikeGit(
            (dir) => {
              withOrigin(dir)
              git(dir, 'checkout', '-q', '--orphan', 'fresh')
              git(dir, 'config', 'branch.fresh.remote', 'origin')
              git(dir, 'config', 'branch.fresh.merge', 'refs/heads/main')
            },
            { name: 'origin/main', ahead: null, behind: null, gone: true },
          )
          expect(unborn.output.split('\n')[0]).toBe(
            '## No commits yet on fresh...origin/main [gone]',
          )
        })

        it('follows a local upstream, and none when detached or not mapped by a refspec', async () => {
          const local = await statusLikeGit(
            (dir) => {
              git(dir, 'branch', '-q', '--set-upstream-to=main', 'feature')
              git(dir, 'checkout', '-q', 'feature')
            },
            tracking(1, 0, 'main'),
          )
          expect(local.output).toBe('## feature...main [ahead 1]')
          await statusLikeGit((dir) => {
            withOrigin(dir)
            git(dir, 'checkout', '-q', '--detach', 'HEAD~1')
          }, null)
          const unmapped = await statusLikeGit((dir) => {
            withOrigin(dir)
            git(dir, 'config', 'remote.origin.fetch', '+refs/tags/*:refs/tags/*')
          }, null)
          expect(unmapped.output).toBe('## main')
          // A local branch named like the remote-tracking one makes git spell the upstream out.
          const ambiguous = await statusLikeGit(
            (dir) => {
              withOrigin(dir)
              git(dir, 'branch', '-q', 'origin/main')
            },
            tracking(0, 0, 'remotes/origin/main'),
          )
          expect(ambiguous.output).toBe('## main...remotes/origin/main')
        })
      })

      it('shows merge conflicts as unmerged paths like git', async () => {
        const { oracle, call } = await scenario((dir) => {
          write(dir, 'src/app.js', 'main side\n')
          git(dir, 'commit', '-q', '-am', 'Main side')
          expect(() => git(dir, 'merge', '-q', 'feature')).toThrow()
        })
        const result = expectOk(await call('status'))
        expect(result.output + '\n').toBe(git(oracle, 'status', '--porcelain', '-b', '-uall'))
        expect(result.output).toContain('UU src/app.js')
        const diff = expectOk(await call('diff', { path: 'src/app.js' }))
        expect(diff.output).toBe('* Unmerged path src/app.js\n')
        expectFailure(await call('commit', { message: 'merge' }), 'invalid_argument')
        expectFailure(await call('checkout', { ref: 'feature' }), 'invalid_argument')
      })
    })

    describe('log', () => {
      it('matches git log (default format) and pages with a stable cursor', async () => {
        const { oracle, call } = await scenario()
        const first = expectOk(await call('log'))
        expect(body(first.output) + '\n').toBe(git(oracle, 'log', '--no-decorate', '-n', '10'))
        expect(first.metadata?.returned).toBe(10)
        const cursor = first.metadata?.next_cursor as string
        expect(typeof cursor).toBe('string')
        expect(first.output).toContain(`cursor="${cursor}"`)
        const second = expectOk(await call('log', { cursor }))
        expect(second.output + '\n').toBe(
          git(oracle, 'log', '--no-decorate', '--skip=10', '-n', '10'),
        )
        expect(second.metadata?.next_cursor).toBeNull()
        const commits = second.metadata?.commits as { subject: string; author: unknown }[]
        expect(commits.at(-1)?.subject).toBe('Initial commit')
        expect(commits[0]?.author).toMatchObject({ name: AUTHOR.name, tz: '+0200' })
      })

      it('lists merge commits (Merge: line) in the order git log does', async () => {
        const { oracle, call } = await scenario((dir) => {
          write(dir, 'm.txt', 'main\n')
          git(dir, 'add', '-A')
          git(dir, 'commit', '-q', '-m', 'Main after feature')
          git(dir, 'merge', '-q', '--no-ff', '-m', 'Merge feature', 'feature')
          write(dir, 'after.txt', 'x\n')
          git(dir, 'add', '-A')
          git(dir, 'commit', '-q', '-m', 'After merge')
        })
        const result = expectOk(await call('log', { limit: 8 }))
        expect(body(result.output) + '\n').toBe(git(oracle, 'log', '--no-decorate', '-n', '8'))
        expect(result.output).toMatch(/^Merge: [0-9a-f]{7} [0-9a-f]{7}$/m)
      })

      it('starts at a ref with a limit', async () => {
        const { oracle, call } = await scenario()
        const result = expectOk(await call('log', { ref: 'feature', limit: 3 }))
        expect(body(result.output) + '\n').toBe(
          git(oracle, 'log', '--no-decorate', '-n', '3', 'feature'),
        )
        const tilde = expectOk(await call('log', { ref: 'v1.0~3', limit: 1 }))
        expect(body(tilde.output) + '\n').toBe(
          git(oracle, 'log', '--no-decorate', '-n', '1', 'v1.0~3'),
        )
      })

      it('refuses bad cursors, a cursor of another listing and limits past the max', async () => {
        const { handle, call } = await scenario((dir) => {
          write(dir, 'u1.txt', '1\n')
          write(dir, 'u2.txt', '2\n')
        })
        await refusedUnchanged(
          handle,
          () => call('log', { cursor: 'garbage!' }),
          'invalid_argument',
        )
        await refusedUnchanged(
          handle,
          () => call('log', { cursor: 'eyJ2IjoxfQ' }),
          'invalid_argument',
        )
        const status = expectOk(await call('status', { limit: 1 }))
        const foreign = status.metadata?.next_cursor as string
        expect(typeof foreign).toBe('string')
        await refusedUnchanged(handle, () => call('log', { cursor: foreign }), 'invalid_argument')
        const forged = encodeCursor('git.log', { s: '--output=pwned.txt', n: 'HEAD', o: 0 })
        await refusedUnchanged(handle, () => call('log', { cursor: forged }), 'invalid_argument')
        await refusedUnchanged(handle, () => call('log', { limit: 201 }), 'invalid_argument')
        await refusedUnchanged(handle, () => call('log', { limit: 0 }), 'invalid_argument')
        await refusedUnchanged(handle, () => call('log', { ref: 'no-such-ref' }), 'not_found')
      })
    })

    describe('diff', () => {
      const edits = (dir: string) => {
        const app = git(dir, 'show', 'HEAD:src/app.js').split('\n')
        app[22] = '  step(23) // changed'
        app.splice(35, 1)
        write(dir, 'src/app.js', app.join('\n'))
        write(dir, 'README.md', '# demo\nno newline at end')
        git(dir, 'rm', '-q', '--cached', 'docs/guide.txt')
        write(dir, 'docs/guide.txt', 'guide\n')
        write(dir, 'src/util.js', '')
        write(dir, 'logo.bin', new Uint8Array([0, 1, 2, 3, 4, 0, 9]))
        write(dir, 'added.txt', 'one\ntwo\n')
        git(dir, 'add', 'added.txt')
        write(dir, 'added.txt', 'one\ntwo\nthree\n')
        git(dir, 'rm', '-q', 'CHANGES.txt')
        write(dir, 'untracked.txt', 'not shown\n')
      }

      it('matches git diff (working tree against the index)', async () => {
        const { oracle, call } = await scenario(edits)
        const result = expectOk(await call('diff'))
        expect(result.output).toBe(git(oracle, 'diff', '--no-renames'))
        expect(result.output).toContain('Binary files a/logo.bin and b/logo.bin differ')
        expect(result.metadata?.next_byte_offset).toBeNull()
        const files = result.metadata?.files as { path: string; status: string }[]
        expect(files.map((f) => f.path)).toEqual([
          'README.md',
          'added.txt',
          'logo.bin',
          'src/app.js',
          'src/util.js',
        ])
      })

      it('matches git diff <ref> and git diff -- <path>', async () => {
        const { oracle, call } = await scenario(edits)
        const vsRef = expectOk(await call('diff', { ref: 'HEAD~3' }))
        expect(vsRef.output).toBe(git(oracle, 'diff', '--no-renames', 'HEAD~3'))
        const vsBranch = expectOk(await call('diff', { ref: 'feature', path: 'src' }))
        expect(vsBranch.output).toBe(git(oracle, 'diff', '--no-renames', 'feature', '--', 'src'))
        const one = expectOk(await call('diff', { path: 'src/app.js' }))
        expect(one.output).toBe(git(oracle, 'diff', '--', 'src/app.js'))
        const none = expectOk(await call('diff', { path: 'docs' }))
        expect(none.output).toBe('(no differences)')
        expect(none.metadata?.total_bytes).toBe(0)
      })

      it('pages by bytes: the windows join to the whole diff', async () => {
        const { oracle, call } = await scenario(edits)
        const whole = git(oracle, 'diff', '--no-renames')
        let offset: number | null = 0
        const parts: string[] = []
        let windows = 0
        while (offset !== null) {
          const result = expectOk(await call('diff', { byte_offset: offset, max_bytes: 256 }))
          const next = result.metadata?.next_byte_offset as number | null
          const returned = result.metadata?.returned_bytes as number
          expect(returned).toBeLessThanOrEqual(256)
          parts.push(
            next === null
              ? result.output
              : result.output.replace(/\n?\.\.\. \(diff continues[^\n]*$/, ''),
          )
          if (next !== null) expect(result.output).toContain(`next byte_offset=${next}`)
          offset = next
          windows++
        }
        expect(windows).toBeGreaterThan(3)
        expect(parts.join('')).toBe(whole)
      })

      it('refuses a byte_offset past the end, bad max_bytes and paths outside the workspace', async () => {
        const { handle, call } = await scenario(edits)
        await refusedUnchanged(
          handle,
          () => call('diff', { byte_offset: 10_000_000 }),
          'invalid_argument',
        )
        await refusedUnchanged(handle, () => call('diff', { max_bytes: 10 }), 'invalid_argument')
        await refusedUnchanged(
          handle,
          () => call('diff', { max_bytes: 102401 }),
          'invalid_argument',
        )
        await refusedUnchanged(
          handle,
          () => call('diff', { path: '../outside' }),
          'permission_denied',
        )
        await refusedUnchanged(
          handle,
          () => call('add', { path: '../../etc' }),
          'permission_denied',
        )
        await refusedUnchanged(handle, () => call('diff', { ref: 'nope' }), 'not_found')
      })
    })

    describe('abbreviated object ids', () => {
      const abbrevs = (text: string) => [...text.matchAll(/^index ([0-9a-f]+)\.\.([0-9a-f]+)/gm)]

      it('grow to 8 digits in a repository of more than 2^14 packed objects, like git', async () => {
        const big = largeRepo()
        write(big, 'src/app.js', 'rewritten\n')
        write(big, 'new.txt', 'new\n')
        git(big, 'add', 'new.txt')
        const handle = await target.open(big)
        open.push(handle)
        const call = (command: string, args: Record<string, unknown> = {}) =>
          handle.session.git(command, args)
        const oracle = await handle.materialize()
        const diff = expectOk(await call('diff'))
        expect(diff.output).toBe(git(oracle, 'diff'))
        const vsHead = expectOk(await call('diff', { ref: 'HEAD' }))
        expect(vsHead.output).toBe(git(oracle, 'diff', 'HEAD'))
        expect(vsHead.output).toContain('index 00000000..')
        for (const m of abbrevs(vsHead.output)) {
          expect(m[1]).toHaveLength(8)
          expect(m[2]).toHaveLength(8)
        }
        expectOk(await call('add'))
        const commit = expectOk(await call('commit', { message: 'Big change' }))
        const dir = await handle.materialize()
        const short = git(dir, 'rev-parse', '--short', 'HEAD').trim()
        expect(short).toHaveLength(8)
        expect(commit.output).toBe(`[main ${short}] Big change`)
        const first = git(dir, 'rev-parse', 'HEAD~1').trim()
        const detached = expectOk(await call('checkout', { ref: first }))
        expect(detached.output).toBe(
          `HEAD is now at ${git(dir, 'rev-parse', '--short', first).trim()} Large commit`,
        )
        const branches = expectOk(await call('branch'))
        expect(branches.output + '\n').toBe(git(await handle.materialize(), 'branch'))
        expect(branches.output).toContain(`(HEAD detached at ${first.slice(0, 8)})`)
      })

      it('extend past a prefix another object shares, loose or packed, like git', async () => {
        const [one, two] = COLLIDING_BLOBS
        const setup = (dir: string, both: boolean) => {
          write(dir, 'one.txt', one)
          if (both) write(dir, 'two.txt', two)
          git(dir, 'add', '-A')
          git(dir, 'commit', '-q', '-m', 'Colliding blobs')
          write(dir, 'one.txt', two)
        }
        // The working-tree blob is in no object store: only its own id is extended, past the
        // committed blob's.
        const loose = await scenario((dir) => setup(dir, false))
        const looseDiff = expectOk(await loose.call('diff'))
        expect(looseDiff.output).toBe(git(loose.oracle, 'diff'))
        expect(looseDiff.output).toContain('index 2acdf8c..2acdf8c3 100644')
        const packed = await scenario((dir) => {
          setup(dir, true)
          git(dir, 'repack', '-a', '-d', '-q')
          git(dir, 'prune-packed')
        })
        expect(
          filesOf(packed.oracle)['.git/objects/2a/cdf8cd8e282f7e089b2af87485fbfd6d524436'],
        ).toBe(undefined)
        const packedDiff = expectOk(await packed.call('diff'))
        expect(packedDiff.output).toBe(git(packed.oracle, 'diff'))
        expect(packedDiff.output).toContain('index 2acdf8cd..2acdf8c3 100644')
        const other = expectOk(await packed.call('diff', { path: 'README.md' }))
        expect(other.output).toBe('(no differences)')
      })

      it('follow core.abbrev', async () => {
        const { oracle, call } = await scenario((dir) => {
          git(dir, 'config', 'core.abbrev', '12')
          write(dir, 'README.md', 'changed\n')
        })
        const diff = expectOk(await call('diff'))
        expect(diff.output).toBe(git(oracle, 'diff'))
        expect(abbrevs(diff.output)[0]![1]).toHaveLength(12)
      })
    })

    describe('branch', () => {
      it('lists like git branch, also with a detached HEAD', async () => {
        const { oracle, call } = await scenario()
        const result = expectOk(await call('branch'))
        expect(result.output + '\n').toBe(git(oracle, 'branch'))
        const detached = await scenario((dir) => {
          git(dir, 'checkout', '-q', git(dir, 'rev-parse', 'HEAD~1').trim())
        })
        const listed = expectOk(await detached.call('branch'))
        expect(listed.output + '\n').toBe(git(detached.oracle, 'branch'))
        expect(listed.metadata?.detached).toBe(true)
      })

      it('creates a branch at HEAD or at a ref, and refuses bad or taken names', async () => {
        const { handle, call } = await scenario()
        expectOk(await call('branch', { name: 'topic/one' }))
        expectOk(await call('branch', { name: 'old', ref: 'v1.0~2' }))
        const dir = await handle.materialize()
        expect(git(dir, 'rev-parse', 'topic/one').trim()).toBe(
          git(repo, 'rev-parse', 'main').trim(),
        )
        expect(git(dir, 'rev-parse', 'old').trim()).toBe(git(repo, 'rev-parse', 'v1.0~2').trim())
        await refusedUnchanged(
          handle,
          () => call('branch', { name: 'feature' }),
          'invalid_argument',
        )
        await refusedUnchanged(
          handle,
          () => call('branch', { name: 'bad..name' }),
          'invalid_argument',
        )
        await refusedUnchanged(handle, () => call('branch', { name: '-x' }), 'invalid_argument')
        await refusedUnchanged(
          handle,
          () => call('branch', { name: 'x', ref: 'nope' }),
          'not_found',
        )
      })
    })

    describe('checkout', () => {
      it('switches branches like git checkout (files, index, HEAD), carrying unrelated changes', async () => {
        const setup = (dir: string) => write(dir, 'README.md', '# local change\n')
        const { oracle, handle, call } = await scenario(setup)
        const result = expectOk(await call('checkout', { ref: 'feature' }))
        expect(result.output).toBe("Switched to branch 'feature'")
        git(oracle, 'checkout', '-q', 'feature')
        expect(stateOf(await handle.materialize())).toEqual(stateOf(oracle))
        const back = expectOk(await call('checkout', { ref: 'main' }))
        expect(back.output).toBe("Switched to branch 'main'")
        git(oracle, 'checkout', '-q', 'main')
        expect(stateOf(await handle.materialize())).toEqual(stateOf(oracle))
        expect(expectOk(await call('checkout', { ref: 'main' })).output).toBe("Already on 'main'")
      })

      it('detaches at a commit and creates a new branch', async () => {
        const { oracle, handle, call } = await scenario()
        const oid = git(oracle, 'rev-parse', 'HEAD~4').trim()
        const detached = expectOk(await call('checkout', { ref: oid }))
        expect(detached.output).toBe(`HEAD is now at ${oid.slice(0, 7)} Change 11`)
        git(oracle, 'checkout', '-q', oid)
        expect(stateOf(await handle.materialize())).toEqual(stateOf(oracle))
        const created = expectOk(await call('checkout', { name: 'fix', new_branch: true }))
        expect(created.output).toBe("Switched to a new branch 'fix'")
        git(oracle, 'checkout', '-q', '-b', 'fix')
        expect(stateOf(await handle.materialize())).toEqual(stateOf(oracle))
      })

      it('refuses a checkout that would overwrite local changes, changing nothing', async () => {
        const { handle, call } = await scenario((dir) => write(dir, 'src/app.js', 'mine\n'))
        const result = await refusedUnchanged(
          handle,
          () => call('checkout', { ref: 'feature' }),
          'version_conflict',
        )
        expect(result.output).toContain('src/app.js')
        expect(result.metadata?.conflicts).toEqual(['src/app.js'])
        const untracked = await scenario((dir) => write(dir, 'feature.txt', 'untracked mine\n'))
        await refusedUnchanged(
          untracked.handle,
          () => untracked.call('checkout', { ref: 'feature' }),
          'version_conflict',
        )
      })

      it('refuses unknown refs and malformed arguments', async () => {
        const { handle, call } = await scenario()
        await refusedUnchanged(handle, () => call('checkout', { ref: 'nope' }), 'not_found')
        await refusedUnchanged(handle, () => call('checkout', {}), 'invalid_argument')
        await refusedUnchanged(handle, () => call('checkout', { name: 'x' }), 'invalid_argument')
        await refusedUnchanged(
          handle,
          () => call('checkout', { name: 'feature', new_branch: true }),
          'invalid_argument',
        )
        await refusedUnchanged(handle, () => call('nonsense'), 'invalid_argument')
      })
    })

    describe('stash', () => {
      it('pushes, lists and pops like git stash', async () => {
        const setup = (dir: string) => {
          write(dir, 'src/app.js', 'stashed change\n')
          write(dir, 'brand-new.txt', 'new\n')
          git(dir, 'add', 'brand-new.txt')
          write(dir, 'untracked.txt', 'stays\n')
        }
        const { oracle, handle, call } = await scenario(setup)
        const pushed = expectOk(await call('stash', { subcommand: 'push' }))
        git(oracle, 'stash', 'push', '-q')
        const subject = 'Change 15'
        const head = git(oracle, 'rev-parse', '--short=7', 'HEAD').trim()
        expect(pushed.output).toBe(
          `Saved working directory and index state WIP on main: ${head} ${subject}`,
        )
        const afterPush = stateOf(await handle.materialize())
        const expectedPush = stateOf(oracle)
        expect(afterPush.status).toBe(expectedPush.status)
        expect(afterPush.stash).toBe(expectedPush.stash)
        expect(afterPush.worktree).toEqual(expectedPush.worktree)
        const listed = expectOk(await call('stash', { subcommand: 'list' }))
        expect(listed.output + '\n').toBe(git(oracle, 'stash', 'list'))
        const popped = expectOk(await call('stash', { subcommand: 'pop' }))
        expect(popped.output).toMatch(/^Dropped refs\/stash@\{0\} \([0-9a-f]{40}\)$/)
        git(oracle, 'stash', 'pop', '-q')
        const afterPop = stateOf(await handle.materialize())
        const expectedPop = stateOf(oracle)
        expect(afterPop.status).toBe(expectedPop.status)
        expect(afterPop.worktree).toEqual(expectedPop.worktree)
        expect(afterPop.stash).toBe('')
        expect(expectOk(await call('stash', { subcommand: 'list' })).output).toBe(
          '(no stash entries)',
        )
      })

      it('pops a stash git made, and git pops a stash the tool made', async () => {
        const setup = (dir: string) => {
          write(dir, 'src/util.js', 'stashed by git\n')
          write(dir, 'added-by-git.txt', 'new\n')
          git(dir, 'add', 'added-by-git.txt')
          git(dir, 'stash', 'push', '-q')
        }
        const { oracle, handle, call } = await scenario(setup)
        expectOk(await call('stash', { subcommand: 'pop' }))
        git(oracle, 'stash', 'pop', '-q')
        const popped = stateOf(await handle.materialize())
        expect(popped.status).toBe(stateOf(oracle).status)
        expect(popped.worktree).toEqual(stateOf(oracle).worktree)

        const other = await scenario((dir) => write(dir, 'README.md', '# stashed by the tool\n'))
        expectOk(await other.call('stash', { message: 'by the tool' }))
        const dir = await other.handle.materialize()
        expect(git(dir, 'stash', 'list')).toBe('stash@{0}: On main: by the tool\n')
        git(dir, 'stash', 'pop', '-q')
        expect(git(dir, 'status', '--porcelain')).toBe(' M README.md\n')
        expect(git(dir, 'show', ':README.md')).toBe('# demo\n')
      })

      it('says when there is nothing to stash or pop', async () => {
        const { handle, call } = await scenario((dir) => write(dir, 'untracked.txt', 'x\n'))
        const nothing = expectOk(await call('stash'))
        expect(nothing.output).toBe('No local changes to save')
        expect(nothing.metadata?.stashed).toBe(false)
        await refusedUnchanged(handle, () => call('stash', { subcommand: 'pop' }), 'not_found')
      })
    })

    describe('remote and worktree', () => {
      it('lists remotes like git remote -v', async () => {
        const { oracle, call } = await scenario()
        const result = expectOk(await call('remote'))
        expect(result.output + '\n').toBe(git(oracle, 'remote', '-v'))
      })

      it('lists working trees like git worktree list', async () => {
        const { handle, call } = await scenario()
        const result = expectOk(await call('worktree'))
        const dir = await handle.materialize()
        const head = git(dir, 'rev-parse', '--short=7', 'HEAD').trim()
        if (target.local) expect(result.output + '\n').toBe(git(dir, 'worktree', 'list'))
        else expect(result.output).toBe(`/  ${head} [main]`)
        expect(result.metadata?.worktrees).toEqual([
          expect.objectContaining({ head: git(dir, 'rev-parse', 'HEAD').trim(), branch: 'main' }),
        ])
      })
    })

    describe('init, add, commit', () => {
      it('initialises a repository, stages, commits and logs without a shell', async () => {
        const empty = tempDir()
        write(empty, 'notes/a.txt', 'alpha\n')
        const handle = await target.open(empty)
        open.push(handle)
        const { session } = handle
        expectFailure(await session.git('status'), 'not_found')
        expectFailure(await session.git('log'), 'not_found')
        expect(expectOk(await session.git('init')).output).toMatch(
          /^Initialized empty Git repository in .*\/\.git\/$/,
        )
        expectFailure(await session.git('log'), 'not_found')
        expectFailure(await session.git('commit', { message: 'empty' }), 'invalid_argument')
        expect(expectOk(await session.git('add')).output).toBe("add 'notes/a.txt'")
        const first = expectOk(await session.git('commit', { message: 'First commit' }))
        expect(first.output).toMatch(/^\[main \(root-commit\) [0-9a-f]{7}\] First commit$/)
        await session.writeFile('notes/a.txt', 'alpha\nbeta\n')
        await session.writeFile('b.txt', 'bee\n')
        expect(expectOk(await session.git('add', { path: 'notes' })).output).toBe(
          "add 'notes/a.txt'",
        )
        const second = expectOk(await session.git('commit', { message: 'Second\n\nWith a body.' }))
        expect(second.output).toMatch(/^\[main [0-9a-f]{7}\] Second$/)
        expectFailure(await session.git('commit', { message: 'again' }), 'invalid_argument')
        const log = expectOk(await session.git('log'))
        const dir = await handle.materialize()
        expect(log.output + '\n').toBe(git(dir, 'log', '--no-decorate'))
        expect(git(dir, 'log', '--format=%an <%ae>|%s')).toBe(
          `${AUTHOR.name} <${AUTHOR.email}>|Second\n${AUTHOR.name} <${AUTHOR.email}>|First commit\n`,
        )
        expect(git(dir, 'status', '--porcelain', '-uall')).toBe('?? b.txt\n')
        // The commit's zone is the host's, written as git writes it (UTC is +0000, never -0000).
        expect(git(dir, 'log', '-1', '--format=%ai').trim().slice(-5)).toBe(
          tzOfOffset(new Date().getTimezoneOffset()),
        )
        git(dir, 'fsck', '--strict')
        await session.writeFile('notes/a.txt', 'changed\n')
        await session.git('add')
        expect(git(await handle.materialize(), 'status', '--porcelain', '-uall')).toBe(
          'A  b.txt\nM  notes/a.txt\n',
        )
        expectFailure(await session.git('add', { path: 'missing.txt' }), 'not_found')
        expect(expectOk(await session.git('init')).output).toMatch(/^Reinitialized existing/)
      })

      it('stages deletions with add', async () => {
        const { handle, call } = await scenario((dir) => {
          git(dir, 'rm', '-q', '--cached', 'README.md')
        })
        await handle.workspace.remove(
          (await import('../../adapters/index.ts')).WorkspacePath.parse('src/util.js'),
        )
        if (target.local) write(await handle.materialize(), 'build/ignored.txt', 'ignored\n')
        else
          await handle.workspace.write(
            (await import('../../adapters/index.ts')).WorkspacePath.parse('build/ignored.txt'),
            new TextEncoder().encode('ignored\n'),
          )
        expect(expectOk(await call('add', { path: 'build/ignored.txt' })).output).toBe(
          '(nothing to add)',
        )
        const added = expectOk(await call('add'))
        expect(added.output).toBe("add 'README.md'\nremove 'src/util.js'")
        const dir = await handle.materialize()
        expect(git(dir, 'status', '--porcelain', '-uall')).toBe('D  src/util.js\n')
      })
    })
  })
}
