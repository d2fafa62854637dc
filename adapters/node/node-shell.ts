import { homedir } from 'node:os'
import { IsoagentError, type Shell } from '../../src/index.ts'
import { runCommand, type ShellContext } from './shell-command.ts'
import { snapshotTree } from './shell-snapshot.ts'

// The Node shell: its options and clean environment; a command's run is in shell-command.ts,
// the tree snapshot in shell-snapshot.ts, killing process groups in process-groups.ts.

export { KILL_GRACE_MS, liveGroupMembers } from './process-groups.ts'

/** Options of {@link nodeShell}. */
export interface NodeShellOptions {
  /** Absolute real path of the workspace root: the working directory of every command. */
  root: string
  /**
   * Variables added on top of the clean base environment ({@link baseShellEnv}). Nothing else
   * of the host's environment reaches commands: pass what they need (tokens, proxies) here.
   */
  env?: Record<string, string>
  /**
   * `ulimit -u` for each command: the most processes the user may have while it runs, bounding
   * fork bombs where the OS enforces it (Linux counts all of the user's processes, and does not
   * apply the limit to root). Off by default.
   */
  maxProcesses?: number
}

/**
 * The clean base environment of commands: `PATH` and `HOME` from the host (or defaults),
 * `TMPDIR` when the host sets it, `LANG=C.UTF-8`, `TERM=dumb`, `NO_COLOR=1`, `PAGER=cat`,
 * `GIT_PAGER=cat`, `GIT_TERMINAL_PROMPT=0`. No other host variable is passed on.
 */
export function baseShellEnv(): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH || '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: process.env.HOME || homedir(),
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    GIT_TERMINAL_PROMPT: '0',
  }
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR
  return env
}

/**
 * The Node {@link Shell}: `bash -c` via `child_process.spawn`, detached into a process group of
 * its own, stdin `/dev/null`, stdout and stderr piped, the clean environment of
 * {@link baseShellEnv} plus `options.env` and the request's `env`. At the deadline or on abort
 * the whole group gets SIGTERM, then SIGKILL after {@link KILL_GRACE_MS}; the pipes are then
 * closed even if a process outside the group still holds them. After a normal exit, processes
 * left running in the group are killed the same way. Processes that start a session of their
 * own (`setsid`) leave the group and are not tracked. If the host process exits (`exit` event)
 * while commands run, their groups get SIGKILL; a host killed by a signal it does not handle
 * cannot do that, so hosts should close their sessions on SIGINT/SIGTERM (the CLI does).
 */
export function nodeShell(options: NodeShellOptions): Shell {
  const maxProcesses = options.maxProcesses
  if (maxProcesses !== undefined && (!Number.isInteger(maxProcesses) || maxProcesses < 1))
    throw new IsoagentError('invalid_argument', 'shellMaxProcesses must be a positive integer')
  const shell: ShellContext = {
    root: options.root,
    baseEnv: { ...baseShellEnv(), ...options.env },
    maxProcesses,
  }
  return {
    run: (request) => runCommand(shell, request),
    snapshot: (snapshotOptions) => snapshotTree(shell.root, snapshotOptions),
  }
}
