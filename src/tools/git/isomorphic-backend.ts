// The npm `buffer` package (explicit file, so no bundler mistakes it for Node's built-in): the
// Buffer that isomorphic-git needs as a global where the runtime has none (browsers, workerd).
// eslint-disable-next-line no-restricted-imports
import { Buffer as BufferPolyfill } from 'buffer/index.js'
import type { GitBackend } from '../../workspace/git-backend.ts'
import type { IsoGitFs } from './fs-bridge.ts'
import { checkout } from './isomorphic/checkout.ts'
import { add, commit, init } from './isomorphic/commit.ts'
import { repoContext, type RepoContext, type RepoShared } from './isomorphic/context.ts'
import { diff, treeChanges } from './isomorphic/diff.ts'
import { log } from './isomorphic/log.ts'
import {
  abbreviate,
  branches,
  createBranch,
  remotes,
  resolveCommit,
  worktrees,
} from './isomorphic/refs.ts'
import { stashList, stashPop, stashPush } from './isomorphic/stash.ts'
import { status } from './isomorphic/status.ts'
import { stoppableFs } from './isomorphic/stoppable-fs.ts'
import { stoppableGitBackend } from './stopping.ts'

export { unmergedCode, unmergedOfIndex } from './isomorphic/index-file.ts'
export { shortenRef, trackingRef } from './isomorphic/ref-names.ts'

/** Options of {@link isomorphicGitBackend}. */
export interface IsomorphicBackendOptions {
  /** The file system holding the working tree (and `.git`) at `dir`. */
  fs: IsoGitFs
  /** Working-tree directory on `fs` (default `/`). */
  dir?: string
  /** Path shown by `worktree` for the main working tree (default `dir`). */
  displayRoot?: string
}

/**
 * Installs a `Buffer` global from the `buffer` package when the runtime has none (browsers,
 * workerd without nodejs_compat), or only a stand-in lacking `from`, `alloc` or `isBuffer`:
 * isomorphic-git uses the global. Node's own Buffer is kept. This runs when the first
 * isomorphic-git backend is created, never at import time.
 */
function ensureBufferGlobal(): void {
  const g = globalThis as Record<string, unknown>
  const current = g['Buffer'] as
    { from?: unknown; alloc?: unknown; isBuffer?: unknown; concat?: unknown } | undefined
  const complete =
    current !== undefined &&
    typeof current.from === 'function' &&
    typeof current.alloc === 'function' &&
    typeof current.isBuffer === 'function' &&
    typeof current.concat === 'function'
  if (!complete) g['Buffer'] = BufferPolyfill
}

/**
 * The git backend on isomorphic-git: serves any file system it is given (the workspace bridge
 * for memory, browser and other non-local workspaces; `node:fs` on local disk). Each operation
 * lives in its own module under `isomorphic/`, over a {@link RepoContext}.
 *
 * Stopping ({@link GitBackend.withSignal}): isomorphic-git runs in process, so a stopped call
 * ends at its next file operation (reads are refused once the signal has aborted) and at the
 * next backend step; its partial answer is discarded and it rejects with the stop reason. A
 * call that has already written (a blob, the index, a ref, a working-tree file) is not
 * interrupted: it runs to the end of its operation and resolves, since the change happened.
 */
export function isomorphicGitBackend(options: IsomorphicBackendOptions): GitBackend {
  ensureBufferGlobal()
  const dir = options.dir ?? '/'
  const shared: RepoShared = {
    dir,
    gitdir: dir.endsWith('/') ? `${dir}.git` : `${dir}/.git`,
    displayRoot: options.displayRoot ?? dir,
    cache: {},
    invalidate: () => {
      shared.cache = {}
    },
    statOids: new Map(),
    packOids: new Map(),
  }
  const withSignal = (signal: AbortSignal): GitBackend => {
    const call = { changing: false }
    return stoppableGitBackend(
      { ...operations(repoContext(stoppableFs(options.fs, signal, call), shared)), withSignal },
      signal,
      () => signal.aborted && !call.changing,
      // Reads were refused midway: nothing cached during this call can be trusted.
      shared.invalidate,
    )
  }
  return { ...operations(repoContext(options.fs, shared)), withSignal }
}

/** The operations of the port over one repository context. */
function operations(repo: RepoContext): Omit<GitBackend, 'withSignal'> {
  return {
    kind: 'isomorphic-git',
    head: () => repo.head(),
    status: () => status(repo),
    resolveCommit: (ref) => resolveCommit(repo, ref),
    abbreviate: (oids) => abbreviate(repo, oids),
    log: (start, skip, limit) => log(repo, start, skip, limit),
    branches: () => branches(repo),
    createBranch: (name, oid) => createBranch(repo, name, oid),
    treeChanges: (from, to) => treeChanges(repo, from, to),
    checkout: (target, who) => checkout(repo, target, who),
    diff: (ref, prefix) => diff(repo, ref, prefix),
    stashList: () => stashList(repo),
    stashPush: (message, indexMessage, who) => stashPush(repo, message, indexMessage, who),
    stashPop: () => stashPop(repo),
    remotes: () => remotes(repo),
    worktrees: () => worktrees(repo),
    init: (defaultBranch) => init(repo, defaultBranch),
    add: (prefix) => add(repo, prefix),
    commit: (message, who) => commit(repo, message, who),
  }
}
