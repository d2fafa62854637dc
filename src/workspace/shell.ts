import type { WorkspacePath } from './workspace-path.ts'

/** One command for a {@link Shell}. */
export interface ShellRequest {
  /** Script run by `bash -c`. */
  command: string
  /** Working directory inside the workspace (default: the root). */
  cwd?: WorkspacePath
  /** Variables added on top of the shell's own clean environment for this command only. */
  env?: Record<string, string>
  /**
   * Deadline in ms from the start. It covers the command, the drain of its output pipes and
   * the exit of every process in its group: when it passes, the whole group is killed.
   */
  timeoutMs: number
  /** Aborting kills the whole process group, like the deadline does. */
  signal: AbortSignal
  /** Raw stdout bytes, as they arrive. */
  onStdout(chunk: Uint8Array): void
  /** Raw stderr bytes, as they arrive. */
  onStderr(chunk: Uint8Array): void
}

/** How a command ended. */
export interface ShellOutcome {
  /** Exit status of `bash`, or null when it was ended by a signal. */
  exitCode: number | null
  /** Name of the signal that ended `bash` (`SIGTERM`, `SIGKILL`, ...), or null. */
  signal: string | null
  /** The deadline passed (while running or while draining output) and the group was killed. */
  timedOut: boolean
  /** The request's signal aborted the command and the group was killed. */
  cancelled: boolean
  /**
   * `bash` had exited but its output pipes were still held open by a process it left behind
   * when the deadline came; the pipes were closed by force.
   */
  pipesHeldOpen: boolean
  /**
   * `bash` exited and its pipes closed, but processes it started were still running in its
   * group (background jobs with their output redirected); they were killed.
   */
  backgroundKilled: boolean
  /** Processes of the group still alive after the group was killed (0 when all are gone). */
  survivors: number
  durationMs: number
}

/** One entry of a {@link TreeSnapshot}: a file, directory or symlink. */
export interface TreeEntry {
  kind: 'file' | 'directory' | 'symlink' | 'other'
  /** Changes whenever the entry's content or metadata changes (size, mtime, ctime, inode). */
  signature: string
}

/** Every entry under the workspace root, up to a bound, in walk order. */
export interface TreeSnapshot {
  /** Root-relative `/`-separated paths, in depth-first order with names sorted. */
  entries: Map<string, TreeEntry>
  /** The bound stopped the walk: entries after the last one were not seen. */
  truncated: boolean
}

/**
 * The shell port (Node only): runs `bash -c` in the workspace root, in a process group of its
 * own, with a clean environment, stdin closed, a deadline that covers output drain and exit, and
 * process-group kill (TERM, then KILL) on deadline or cancellation. Offered as
 * `WorkspaceServices.shell` by workspaces whose `capabilities.exec` is true.
 */
export interface Shell {
  run(request: ShellRequest): Promise<ShellOutcome>
  /**
   * Entries under the root, skipping `.git` directories, at most `maxEntries` of them; used to
   * report the paths a command created, modified or deleted. When `signal` aborts, the walk
   * stops and returns what it saw with `truncated: true`.
   */
  snapshot(options: { maxEntries: number; signal?: AbortSignal }): Promise<TreeSnapshot>
}
