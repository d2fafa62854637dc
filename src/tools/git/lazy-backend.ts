import type { GitBackend } from '../../workspace/git-backend.ts'
import type { IsomorphicBackendOptions } from './isomorphic-backend.ts'

type Operation = Exclude<keyof GitBackend, 'kind' | 'withSignal'>

/** Every asynchronous operation of the port (a Record, so the compiler sees none missing). */
const OPERATIONS: Record<Operation, true> = {
  head: true,
  status: true,
  resolveCommit: true,
  log: true,
  abbreviate: true,
  branches: true,
  createBranch: true,
  treeChanges: true,
  checkout: true,
  diff: true,
  stashList: true,
  stashPush: true,
  stashPop: true,
  remotes: true,
  worktrees: true,
  init: true,
  add: true,
  commit: true,
}

type Operations = Record<Operation, (...args: unknown[]) => Promise<unknown>>

/** A backend of `kind` (a value, or a getter) whose members forward to `withSignal` and `call`. */
function forwarding(
  kind: GitBackend['kind'] | (() => GitBackend['kind']),
  withSignal: (signal: AbortSignal) => GitBackend,
  call: (operation: Operation, args: unknown[]) => Promise<unknown>,
): GitBackend {
  const out: Record<string, unknown> = {}
  if (typeof kind === 'string') out['kind'] = kind
  else Object.defineProperty(out, 'kind', { get: kind, enumerable: true })
  out['withSignal'] = withSignal
  for (const operation of Object.keys(OPERATIONS) as Operation[])
    out[operation] = (...args: unknown[]) => call(operation, args)
  return out as unknown as GitBackend
}

/**
 * The backend that `pick` makes, made at its first use (its `kind`, `withSignal` or an
 * operation) rather than now: e.g. a choice that costs a process spawn, left to the first `git`
 * call. `pick` runs once.
 */
export function deferredGitBackend(pick: () => GitBackend): GitBackend {
  let backend: GitBackend | undefined
  const get = () => (backend ??= pick())
  return forwarding(
    () => get().kind,
    (signal) => get().withSignal(signal),
    (operation, args) => (get() as unknown as Operations)[operation](...args),
  )
}

/**
 * A git backend on isomorphic-git over `options.fs` (exported as `isomorphicGitBackend`), with
 * isomorphic-git and its Buffer polyfill loaded at the first operation, not with the module
 * that creates it: a process that never runs `git` never loads them. Otherwise it is the
 * backend of `isomorphic-backend.ts`, stopping included.
 */
export function lazyIsomorphicGitBackend(options: IsomorphicBackendOptions): GitBackend {
  let loaded: Promise<GitBackend> | undefined
  const root = () =>
    (loaded ??= import('./isomorphic-backend.ts').then((m) => m.isomorphicGitBackend(options)))
  const over = (get: () => Promise<GitBackend>): GitBackend =>
    forwarding(
      'isomorphic-git',
      (signal) => {
        let call: Promise<GitBackend> | undefined
        return over(() => (call ??= root().then((backend) => backend.withSignal(signal))))
      },
      async (operation, args) => ((await get()) as unknown as Operations)[operation](...args),
    )
  return over(root)
}
