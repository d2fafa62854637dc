import type { ChildProcess } from 'node:child_process'
import * as nodePath from 'node:path'
import { performance } from 'node:perf_hooks'
import { IsoagentError } from '../../src/errors.ts'
import type { ShellOutcome, ShellRequest } from '../../src/workspace/shell.ts'
import { killGroup, liveGroupMembers, trackGroup, untrackGroup } from './process-groups.ts'

// One `bash -c` command of the Node shell, run in a process group of its own until it, its
// pipes and every process left in its group are done (see nodeShell for the whole contract).

/** What every command of one Node shell shares. */
export interface ShellContext {
  /** Absolute real path of the workspace root: the working directory of every command. */
  readonly root: string
  /** The clean base environment with the shell's own variables on top. */
  readonly baseEnv: Readonly<Record<string, string>>
  /** `ulimit -u` for each command, when set. */
  readonly maxProcesses: number | undefined
}

/** One running command: its process, what has happened so far, and how its promise settles. */
interface CommandRun {
  readonly child: ChildProcess
  readonly pid: number | undefined
  readonly request: ShellRequest
  readonly started: number
  readonly resolve: (outcome: ShellOutcome) => void
  readonly onAbort: () => void
  timer: ReturnType<typeof setTimeout> | undefined
  exitCode: number | null
  exitSignal: string | null
  exited: boolean
  stdoutOpen: boolean
  stderrOpen: boolean
  timedOut: boolean
  cancelled: boolean
  pipesHeldOpen: boolean
  backgroundKilled: boolean
  survivors: number
  killing: Promise<void> | undefined
  settled: boolean
}

/** The arguments of `bash`: the command, under `ulimit -u` when the shell bounds processes. */
function bashArgs(shell: ShellContext, command: string): string[] {
  if (shell.maxProcesses === undefined) return ['-c', command]
  return [
    '-c',
    'ulimit -u "$1" || exit 126; exec bash -c "$2"',
    'bash',
    String(shell.maxProcesses),
    command,
  ]
}

/** Start `bash` for `request`, detached into a group of its own; throws `io` if it cannot. */
function spawnBash(shell: ShellContext, request: ShellRequest): ChildProcess {
  const cwd = request.cwd ? nodePath.join(shell.root, request.cwd) : shell.root
  try {
    // node:child_process loads at the first command, not with this module.
    return process
      .getBuiltinModule('node:child_process')
      .spawn('bash', bashArgs(shell, request.command), {
        cwd,
        env: { ...shell.baseEnv, ...request.env },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
  } catch (cause) {
    throw new IsoagentError('io', `cannot start bash: ${(cause as Error).message}`, { cause })
  }
}

function cleanup(run: CommandRun): void {
  clearTimeout(run.timer)
  run.request.signal.removeEventListener('abort', run.onAbort)
}

/** Settle the command's promise with what happened. */
function done(run: CommandRun): void {
  if (run.settled) return
  run.settled = true
  cleanup(run)
  if (run.pid !== undefined) untrackGroup(run.pid)
  run.resolve({
    exitCode: run.exitCode,
    signal: run.exitSignal,
    timedOut: run.timedOut,
    cancelled: run.cancelled,
    pipesHeldOpen: run.pipesHeldOpen,
    backgroundKilled: run.backgroundKilled,
    survivors: run.survivors,
    durationMs: performance.now() - run.started,
  })
}

/** Kill the whole group (once), then cut whatever still holds the pipes. */
function terminate(run: CommandRun): void {
  if (run.killing !== undefined || run.pid === undefined) return
  run.killing = killGroup(run.pid).then((left) => {
    run.survivors = left
    // Whatever still holds the pipes (a process outside the group) is cut off now.
    run.child.stdout?.destroy()
    run.child.stderr?.destroy()
  })
  void run.killing.then(() => finish(run))
}

/** Settle once bash has exited and both pipes are closed, after killing what it left running. */
function finish(run: CommandRun): void {
  if (run.settled || !run.exited || run.stdoutOpen || run.stderrOpen) return
  if (run.killing === undefined && run.pid !== undefined && liveGroupMembers(run.pid) > 0) {
    // bash is done and its pipes are closed, but it left processes running.
    run.backgroundKilled = true
    terminate(run)
    return
  }
  if (run.killing !== undefined) {
    void run.killing.then(() => done(run))
    return
  }
  done(run)
}

/** Follow the child's output, pipes and exit, and the request's signal. */
function watch(run: CommandRun, reject: (error: unknown) => void): void {
  const { child, pid, request } = run
  child.on('error', (error) => {
    if (pid === undefined) {
      cleanup(run)
      run.settled = true
      reject(new IsoagentError('io', `cannot start bash: ${error.message}`, { cause: error }))
    }
  })
  if (pid === undefined) return
  // At host exit: SIGKILL at once, no grace.
  trackGroup(pid, 'SIGKILL')
  child.stdout!.on('data', (chunk: Uint8Array) => request.onStdout(chunk))
  child.stderr!.on('data', (chunk: Uint8Array) => request.onStderr(chunk))
  child.stdout!.on('close', () => {
    run.stdoutOpen = false
    finish(run)
  })
  child.stderr!.on('close', () => {
    run.stderrOpen = false
    finish(run)
  })
  child.on('exit', (code, signal) => {
    run.exited = true
    run.exitCode = code
    run.exitSignal = signal
    finish(run)
  })
  if (request.signal.aborted) run.onAbort()
  else request.signal.addEventListener('abort', run.onAbort, { once: true })
}

/** Run `request` with `bash -c` until it and its process group are done. */
export function runCommand(shell: ShellContext, request: ShellRequest): Promise<ShellOutcome> {
  const started = performance.now()
  return new Promise<ShellOutcome>((resolve, reject) => {
    let child: ChildProcess
    try {
      child = spawnBash(shell, request)
    } catch (error) {
      reject(error)
      return
    }
    const run: CommandRun = {
      child,
      pid: child.pid,
      request,
      started,
      resolve,
      onAbort: () => {
        if (run.settled || run.killing !== undefined) return
        run.cancelled = true
        terminate(run)
      },
      timer: undefined,
      exitCode: null,
      exitSignal: null,
      exited: false,
      stdoutOpen: true,
      stderrOpen: true,
      timedOut: false,
      cancelled: false,
      pipesHeldOpen: false,
      backgroundKilled: false,
      survivors: 0,
      killing: undefined,
      settled: false,
    }
    run.timer = setTimeout(() => {
      if (run.settled || run.killing !== undefined) return
      run.timedOut = true
      run.pipesHeldOpen = run.exited
      terminate(run)
    }, request.timeoutMs)
    watch(run, reject)
  })
}
