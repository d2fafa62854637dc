import { performance } from 'node:perf_hooks'
import { stoppableGitBackend, type GitBackend } from '../../src/index.ts'
import { abbreviate } from './git-cli/abbrev.ts'
import { checkout } from './git-cli/checkout.ts'
import { add, commit, init } from './git-cli/commit.ts'
import { diff, treeChanges } from './git-cli/diff.ts'
import { log } from './git-cli/log.ts'
import { branches, createBranch, head, remotes, resolveCommit, worktrees } from './git-cli/refs.ts'
import { childProcess, FINISH_GRACE_MS, gitRunner, type CallState } from './git-cli/runner.ts'
import { stashList, stashPop, stashPush } from './git-cli/stash.ts'
import { status } from './git-cli/status.ts'

/** Options of {@link gitCliBackend}. */
export interface GitCliBackendOptions {
  /** The git executable (default `git` on PATH). */
  executable?: string
}

let detected: boolean | undefined

/** Whether a `git` executable is on PATH (checked once per process). */
export function gitCliAvailable(): boolean {
  if (detected === undefined) {
    try {
      childProcess().execFileSync('git', ['--version'], { stdio: 'ignore', timeout: 10_000 })
      detected = true
    } catch {
      detected = false
    }
  }
  return detected
}

/**
 * The git backend on the git CLI, for a repository at `root` on local disk. Every call runs
 * `git` with a clean environment: no system or global configuration, no hooks, no pager, no
 * prompts, no optional locks, and no repository above `root` (`GIT_CEILING_DIRECTORIES`), so
 * answers depend on the repository alone and match the isomorphic-git backend. Each operation
 * lives in its own module under `git-cli/`, over a `GitRunner`.
 *
 * Stopping ({@link GitBackend.withSignal}): git runs in a process group of its own. When the
 * signal aborts, a reading command (status, log, diff, cat-file, rev-parse, ...) is stopped at
 * once: the group gets SIGTERM, then SIGKILL after 500 ms if anything of it is still there. A
 * call that has started a command changing the repository (checkout, branch, add, commit, stash
 * store/pop, reset, init) gets 1 s from the abort to finish its remaining commands (they take
 * milliseconds on ordinary repositories; git stopped inside `checkout` leaves a half-switched
 * working tree), and is then stopped the same way. git removes its own lock files on SIGTERM;
 * after a SIGKILL, lock files (`*.lock` in the git directory and under `refs/`) that did not
 * exist before the killed command started are removed, as git would have. Once stopped, no new
 * git command starts. Groups still running when the host process exits get SIGTERM (a host
 * killed by a signal it does not handle cannot do that: close sessions on SIGINT/SIGTERM). On
 * Windows only the git process itself is killed.
 */
export function gitCliBackend(root: string, options: GitCliBackendOptions = {}): GitBackend {
  return cliBackend(root, options, { signal: undefined, changing: false, finishBy: 0 })
}

function cliBackend(root: string, options: GitCliBackendOptions, call: CallState): GitBackend {
  const git = gitRunner(root, options.executable ?? 'git', call)
  return {
    kind: 'cli',
    withSignal(signal) {
      const state: CallState = { signal, changing: false, finishBy: 0 }
      const started = () => {
        state.finishBy = performance.now() + FINISH_GRACE_MS
      }
      if (signal.aborted) started()
      else signal.addEventListener('abort', started, { once: true })
      // No git starts once stopped (`mayStart`); what ran before the stop is discarded.
      return stoppableGitBackend(
        cliBackend(root, options, state),
        signal,
        () => signal.aborted && !state.changing,
      )
    },
    head: () => head(git),
    status: () => status(git),
    abbreviate: (oids) => abbreviate(git, oids),
    resolveCommit: (ref) => resolveCommit(git, ref),
    log: (start, skip, limit) => log(git, start, skip, limit),
    branches: () => branches(git),
    createBranch: (name, oid) => createBranch(git, name, oid),
    treeChanges: (from, to) => treeChanges(git, from, to),
    checkout: (target, who) => checkout(git, target, who),
    diff: (ref, prefix) => diff(git, ref, prefix),
    stashList: () => stashList(git),
    stashPush: (message, _indexMessage, who) => stashPush(git, message, who),
    stashPop: () => stashPop(git),
    remotes: () => remotes(git),
    worktrees: () => worktrees(git),
    init: (defaultBranch) => init(git, defaultBranch),
    add: (prefix) => add(git, prefix),
    commit: (message, who) => commit(git, message, who),
  }
}
