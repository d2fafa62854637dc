import { readFile, readdir, lstat, rm } from 'node:fs/promises'
import * as nodePath from 'node:path'
import { performance } from 'node:perf_hooks'
import { gitStoppedError, IsoagentError } from '../../../src/index.ts'
import { trackGroup, untrackGroup } from '../process-groups.ts'

/** Output of one git process. */
export interface RunResult {
  code: number
  stdout: Uint8Array
  stderr: string
}

/** How one git process runs. */
export interface RunOptions {
  input?: string | Uint8Array
  env?: Record<string, string>
  /** The command changes the repository (refs, index, working tree, configuration). */
  changes?: boolean
}

/** One call's stop signal and whether the call has begun changing the repository. */
export interface CallState {
  signal: AbortSignal | undefined
  /** A command that changes the repository has started in this call. */
  changing: boolean
  /** `performance.now()` by which a changing call must have finished once it is stopped. */
  finishBy: number
}

/** Runs git in one repository for one call. */
export interface GitRunner {
  /** The repository's working-tree root. */
  root: string
  /** Run git; any exit status resolves. */
  run(args: string[], options?: RunOptions): Promise<RunResult>
  /** Run git and insist on success (else an `io` error with git's message). */
  ok(args: string[], options?: RunOptions): Promise<Uint8Array>
  /** {@link GitRunner.ok}, decoded as UTF-8. */
  text(args: string[]): Promise<string>
}

/**
 * How long a call that has begun changing the repository may run on after it is stopped (ms):
 * mutating commands are short, and finishing one beats leaving a half-switched working tree.
 */
export const FINISH_GRACE_MS = 1_000
/** How long a stopped git process group gets after SIGTERM before SIGKILL (ms). */
const KILL_GRACE_MS = 500
/** git runs in a process group of its own (POSIX), so filters it starts are stopped with it. */
const GROUPS = process.platform !== 'win32'

const decoder = new TextDecoder()

/** node:child_process, loaded at the first git command rather than with this module. */
export const childProcess = () => process.getBuiltinModule('node:child_process')

/** The git directory and the common directory (they differ in a linked worktree). */
async function gitDirs(root: string): Promise<string[]> {
  const dotGit = nodePath.join(root, '.git')
  try {
    const s = await lstat(dotGit)
    if (s.isDirectory()) return [dotGit]
    const pointer = /^gitdir: (.+)$/m.exec(await readFile(dotGit, 'utf8'))
    if (pointer === null) return []
    const gitdir = nodePath.resolve(root, pointer[1]!.trim())
    const common = await readFile(nodePath.join(gitdir, 'commondir'), 'utf8').then(
      (text) => nodePath.resolve(gitdir, text.trim()),
      () => gitdir,
    )
    return common === gitdir ? [gitdir] : [gitdir, common]
  } catch {
    return []
  }
}

/** Lock files git may hold: `*.lock` at the top of the git directories and under `refs/`. */
async function lockFiles(root: string): Promise<Set<string>> {
  const out = new Set<string>()
  for (const dir of await gitDirs(root)) {
    const top = await readdir(dir).catch(() => [] as string[])
    for (const name of top) if (name.endsWith('.lock')) out.add(nodePath.join(dir, name))
    const refs = await readdir(nodePath.join(dir, 'refs'), { recursive: true }).catch(
      () => [] as string[],
    )
    for (const name of refs) if (name.endsWith('.lock')) out.add(nodePath.join(dir, 'refs', name))
  }
  return out
}

/** Where and how git runs: executable, clean environment, fixed leading arguments. */
interface Invocation {
  root: string
  executable: string
  env: Record<string, string>
  prefixArgs: string[]
}

/** The runner of `root` for the call `call`: git with a clean environment, stopped by it. */
export function gitRunner(root: string, executable: string, call: CallState): GitRunner {
  const invocation: Invocation = {
    root,
    executable,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CEILING_DIRECTORIES: nodePath.dirname(root),
      GIT_TERMINAL_PROMPT: '0',
      GIT_OPTIONAL_LOCKS: '0',
      GIT_PAGER: 'cat',
      // Paths are file names, never pathspec magic (`:(glob)`, `:/`, wildcards).
      GIT_LITERAL_PATHSPECS: '1',
      LC_ALL: 'C',
    },
    prefixArgs: [
      '-c',
      'core.quotepath=off',
      '-c',
      'core.hooksPath=/dev/null',
      '-c',
      'commit.gpgsign=false',
      '-c',
      'core.fsmonitor=false',
      '--no-optional-locks',
    ],
  }

  /** Throws when the call is stopped, unless it is finishing a change within its grace. */
  function mayStart(): void {
    const signal = call.signal
    if (signal === undefined || !signal.aborted) return
    if (call.changing && performance.now() < call.finishBy) return
    throw gitStoppedError(signal)
  }

  async function run(args: string[], options: RunOptions = {}): Promise<RunResult> {
    mayStart()
    let locksBefore: Set<string> | undefined
    if (options.changes === true) {
      locksBefore = await lockFiles(root)
      mayStart()
      call.changing = true
    }
    return spawnGit(invocation, call, args, options, locksBefore)
  }

  async function ok(args: string[], options: RunOptions = {}): Promise<Uint8Array> {
    const result = await run(args, options)
    if (result.code !== 0) {
      const message =
        result.stderr.trim().split('\n').slice(0, 6).join('\n') || `exit ${result.code}`
      throw new IsoagentError('io', `git ${args[0]} failed: ${message}`, {
        data: { exit_code: result.code },
      })
    }
    return result.stdout
  }

  return { root, run, ok, text: async (args) => decoder.decode(await ok(args)) }
}

/** Spawn one git process in its own group; settle on its exit or on the call's stop. */
function spawnGit(
  invocation: Invocation,
  call: CallState,
  args: string[],
  options: RunOptions,
  locksBefore: Set<string> | undefined,
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const signal = call.signal
    const child = childProcess().spawn(invocation.executable, [...invocation.prefixArgs, ...args], {
      cwd: invocation.root,
      env: { ...invocation.env, ...options.env },
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: GROUPS,
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    let settled = false
    let stopping = false
    const timers: ReturnType<typeof setTimeout>[] = []
    const group = GROUPS ? child.pid : undefined
    // At host exit: SIGTERM, so git removes its locks.
    if (group !== undefined) trackGroup(group, 'SIGTERM')
    const settle = () => {
      settled = true
      if (group !== undefined) untrackGroup(group)
      for (const timer of timers) clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    }
    const send = (name: NodeJS.Signals) => {
      try {
        if (group !== undefined) process.kill(-group, name)
        else child.kill(name)
      } catch {
        // ESRCH: the group is gone already.
      }
    }
    const stop = () => {
      if (settled) return
      stopping = true
      send('SIGTERM')
      timers.push(
        setTimeout(() => {
          send('SIGKILL')
          // A process that left the group may still hold the pipes: do not wait for them.
          timers.push(
            setTimeout(() => {
              if (settled) return
              settle()
              child.stdout?.destroy()
              child.stderr?.destroy()
              reject(gitStoppedError(signal!))
            }, KILL_GRACE_MS),
          )
        }, KILL_GRACE_MS),
      )
    }
    function onAbort() {
      // A reading command stops at once; a change gets what is left of the call's grace.
      const wait = call.changing ? Math.max(0, call.finishBy - performance.now()) : 0
      if (wait === 0) stop()
      else timers.push(setTimeout(stop, wait))
    }
    child.stdout!.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr!.on('data', (chunk: Buffer) => err.push(chunk))
    child.on('error', (error) => {
      if (settled) return
      settle()
      reject(new IsoagentError('io', `git could not be run: ${error.message}`, { cause: error }))
    })
    child.on('close', (code, exitSignal) => {
      if (settled) return
      settle()
      if (stopping && code !== 0) {
        void cleanUpLocks(invocation.root, locksBefore, exitSignal).then(() =>
          reject(gitStoppedError(signal!)),
        )
        return
      }
      resolve({
        code: code ?? 1,
        stdout: new Uint8Array(Buffer.concat(out)),
        stderr: Buffer.concat(err).toString('utf8'),
      })
    })
    if (child.stdin !== null) {
      // git may exit before reading all of its input; its exit status tells what happened.
      child.stdin.on('error', () => {})
      child.stdin.end(options.input)
    }
    if (signal !== undefined) {
      signal.addEventListener('abort', onAbort, { once: true })
      if (signal.aborted) onAbort()
    }
  })
}

/**
 * After a stopped git (killed, or failed because a filter it ran was killed): SIGTERM lets git
 * remove its lock files itself; after SIGKILL, remove those that appeared while it ran (a lock
 * that was there before is someone else's). A command that still exited 0 finished its work and
 * never comes here.
 */
async function cleanUpLocks(
  root: string,
  locksBefore: Set<string> | undefined,
  exitSignal: NodeJS.Signals | null,
): Promise<void> {
  if (locksBefore === undefined || exitSignal !== 'SIGKILL') return
  try {
    const after = await lockFiles(root)
    await Promise.all(
      [...after].filter((path) => !locksBefore.has(path)).map((path) => rm(path, { force: true })),
    )
  } catch {
    // Best effort, as before.
  }
}
