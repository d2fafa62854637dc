/**
 * The git backend port: what the `git` tool needs from a repository, as structured data. Two
 * backends implement it (isomorphic-git over any workspace, the git CLI on local disk); one
 * formatter in core turns their answers into text, so both give byte-identical results.
 *
 * Paths are workspace-relative with `/` separators (the repository is the workspace root).
 * Backends throw `IsoagentError`s: `not_found` for unknown refs, `invalid_argument` for refused
 * operations, `io` for anything else, and `cancelled` (or the signal's own `timeout` reason) for
 * operations stopped through {@link GitBackend.withSignal}.
 */

/** Where HEAD points. */
export interface GitHead {
  /** Short branch name, or null when HEAD is detached. */
  branch: string | null
  /** Commit HEAD resolves to, or null on an unborn branch (no commits yet). */
  oid: string | null
}

/**
 * One path of `git status --porcelain` (v1): `index` and `worktree` are its X and Y letters
 * (`' '`, `M`, `A`, `D`, `U`, `?`).
 */
export interface GitStatusEntry {
  path: string
  index: string
  worktree: string
}

/**
 * The upstream of HEAD's branch (`branch.<name>.remote` and `branch.<name>.merge`, mapped through
 * the remote's fetch refspecs), as `git status --porcelain -b` shows it.
 */
export interface GitUpstream {
  /** The upstream's shortest unambiguous name, e.g. `origin/main`. */
  name: string
  /** Commits on the branch that the upstream lacks; null when `gone`. */
  ahead: number | null
  /** Commits on the upstream that the branch lacks; null when `gone`. */
  behind: number | null
  /** The upstream ref does not exist, or the branch has no commits yet (`[gone]`). */
  gone: boolean
}

/** HEAD and the changed paths, as one `git status` reports them. */
export interface GitStatus {
  head: GitHead
  /** The branch's upstream, or null (detached HEAD, or no upstream configured). */
  upstream: GitUpstream | null
  /** Changed, staged, unmerged and untracked paths (untracked listed file by file). */
  entries: GitStatusEntry[]
}

/** A person and a moment, as stored in a commit. */
export interface GitSignature {
  name: string
  email: string
  /** Seconds since the epoch. */
  timestamp: number
  /** Offset from UTC as git writes it, e.g. `+0200`. */
  tz: string
}

/** One commit of a log. */
export interface GitCommit {
  oid: string
  parents: string[]
  author: GitSignature
  committer: GitSignature
  /** The message without trailing newlines. */
  message: string
}

/** A local branch and the commit it names. */
export interface GitBranch {
  name: string
  oid: string
}

/** One side of a changed file: mode, bytes and (when known) blob id. */
export interface GitBlobSide {
  /** Six-digit octal mode, e.g. `100644`. */
  mode: string
  data: Uint8Array
  /** Blob id; computed from `data` when absent (working-tree files). */
  oid?: string
}

/** A file that differs between the two sides of a diff. */
export interface GitDiffFile {
  path: string
  /** null: the file does not exist on that side. */
  old: GitBlobSide | null
  new: GitBlobSide | null
  /** The path has unmerged index entries (a merge conflict). */
  unmerged?: boolean
}

/** A path that differs between two commits' trees. */
export interface GitTreeChange {
  path: string
  /** The path exists in the target tree. */
  inTarget: boolean
}

/** A configured remote. */
export interface GitRemote {
  name: string
  url: string
}

/** One working tree of the repository. */
export interface GitWorktree {
  /** Absolute path (or `/` for a workspace without a local root). */
  path: string
  /** Commit checked out, or null when unborn. */
  head: string | null
  /** Short branch name, or null when detached. */
  branch: string | null
  /** The main working tree (the workspace itself). */
  main: boolean
}

/** A path whose index entry `add` changed. */
export interface GitAddedPath {
  path: string
  action: 'add' | 'remove'
}

/** What a checkout switches to. */
export type GitCheckoutTarget = { branch: string } | { detach: string }

/** The git backend port. */
export interface GitBackend {
  /** `cli` or `isomorphic-git`: which implementation serves this workspace. */
  readonly kind: 'cli' | 'isomorphic-git'
  /**
   * This backend for one tool call that `signal` stops (the `git` tool passes the call's
   * `ToolContext.signal`). Once `signal` aborts:
   *
   * - no new step starts, work in flight stops at the next point the backend can stop it (the
   *   CLI kills its `git` process), and the operation rejects with `signal.reason` when that is an
   *   `IsoagentError` (`cancelled`, `timeout`), else with a `cancelled` one;
   * - an operation never resolves with what it read after the abort;
   * - a call that had already begun changing the repository (a mutating git command started, a
   *   file or ref written) is not cut off at once: it gets a short grace to finish, so the
   *   repository is not left half-changed. If it finishes, it resolves (the change happened);
   *   if not, it is stopped as git itself stops on a signal (see each backend's documentation).
   *
   * State of one call (whether it has begun changing) lives in the returned backend: obtain one
   * per call.
   */
  withSignal(signal: AbortSignal): GitBackend
  /** HEAD's branch and commit. */
  head(): Promise<GitHead>
  /** HEAD plus changed, staged, unmerged and untracked paths (untracked file by file). */
  status(): Promise<GitStatus>
  /** The commit `ref` names (a branch, tag, `HEAD`, full or abbreviated oid), or undefined. */
  resolveCommit(ref: string): Promise<string | undefined>
  /** Up to `limit` commits reachable from `start`, newest first, after skipping `skip`. */
  log(start: string, skip: number, limit: number): Promise<GitCommit[]>
  /**
   * The abbreviations git prints for `oids` (in order): `core.abbrev` digits (auto: from the
   * number of packed objects, at least 7), extended until unique among the repository's objects.
   * The oids need not exist (a working-tree blob, the all-zero id).
   */
  abbreviate(oids: readonly string[]): Promise<string[]>
  /** Local branches, sorted by name. */
  branches(): Promise<GitBranch[]>
  /** Create branch `name` at commit `oid` (the name is already validated). */
  createBranch(name: string, oid: string): Promise<void>
  /** Paths whose content differs between commit `from` (null: empty tree) and commit `to`. */
  treeChanges(from: string | null, to: string): Promise<GitTreeChange[]>
  /**
   * Switch the working tree, index and HEAD (the caller has checked for local changes); `who`
   * signs the HEAD reflog entry.
   */
  checkout(target: GitCheckoutTarget, who: GitSignature): Promise<void>
  /**
   * Files differing between the working tree and the index (`ref` undefined) or the commit `ref`,
   * limited to `prefix` (a file or directory; '' for all), by path.
   */
  diff(ref: string | undefined, prefix: string): Promise<GitDiffFile[]>
  /** Stash entry messages, newest first (`stash@{0}` first). */
  stashList(): Promise<string[]>
  /**
   * Save tracked changes (index and working tree) as a stash entry and reset them to HEAD.
   * `message` is the entry's reflog message. Returns the stash commit.
   */
  stashPush(message: string, indexMessage: string, who: GitSignature): Promise<string>
  /** Apply `stash@{0}` to the working tree and drop it. Returns the dropped commit. */
  stashPop(): Promise<string>
  /** Configured remotes, sorted by name. */
  remotes(): Promise<GitRemote[]>
  /** Working trees: the main one first. */
  worktrees(): Promise<GitWorktree[]>
  /** Create an empty repository whose unborn branch is `defaultBranch`. */
  init(defaultBranch: string): Promise<void>
  /** Stage `prefix` ('' for everything): new and modified files added, deleted ones removed. */
  add(prefix: string): Promise<GitAddedPath[]>
  /** Commit the index on HEAD. `message` ends with a newline. Returns the new commit. */
  commit(message: string, who: GitSignature): Promise<string>
}
