import { lstatSync, readdirSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import * as nodePath from 'node:path'
import { performance } from 'node:perf_hooks'
import {
  IsoagentError,
  type Shell,
  type ShellOutcome,
  type ShellRequest,
  type TreeEntry,
  type TreeSnapshot,
} from '../../src/index.ts'
import { signalGroup, trackGroup, untrackGroup } from './process-groups.ts'

/** How long processes get after SIGTERM before the group gets SIGKILL (ms). */
export const KILL_GRACE_MS = 1_000
/** How long to wait for a SIGKILLed group to disappear before reporting survivors (ms). */
const KILL_WAIT_MS = 1_000
const POLL_MS = 20
/** Longest stretch the workspace walk runs without yielding to the event loop (ms). */
const WALK_SLICE_MS = 8

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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Live (not zombie) processes in group `pgid`: 0 when none. On Linux it reads /proc, so zombies
 * left to an init that does not reap them are not counted; elsewhere any member counts.
 */
export function liveGroupMembers(pgid: number): number {
  try {
    process.kill(-pgid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return 0
  }
  if (process.platform !== 'linux') return 1
  let live = 0
  let names: string[]
  try {
    names = readdirSync('/proc')
  } catch {
    return 1
  }
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8')
    } catch {
      continue
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') live++
  }
  return live
}

/** SIGTERM the group, SIGKILL it after the grace, wait until it is gone; returns survivors. */
async function killGroup(pgid: number): Promise<number> {
  signalGroup(pgid, 'SIGTERM')
  const termUntil = performance.now() + KILL_GRACE_MS
  while (liveGroupMembers(pgid) > 0 && performance.now() < termUntil) await sleep(POLL_MS)
  if (liveGroupMembers(pgid) === 0) return 0
  signalGroup(pgid, 'SIGKILL')
  const killUntil = performance.now() + KILL_WAIT_MS
  while (liveGroupMembers(pgid) > 0 && performance.now() < killUntil) await sleep(POLL_MS)
  return liveGroupMembers(pgid)
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
  const root = options.root
  const baseEnv = { ...baseShellEnv(), ...options.env }
  const maxProcesses = options.maxProcesses
  if (maxProcesses !== undefined && (!Number.isInteger(maxProcesses) || maxProcesses < 1))
    throw new IsoagentError('invalid_argument', 'shellMaxProcesses must be a positive integer')

  return {
    run(request: ShellRequest): Promise<ShellOutcome> {
      const started = performance.now()
      const cwd = request.cwd ? nodePath.join(root, request.cwd) : root
      const args =
        maxProcesses === undefined
          ? ['-c', request.command]
          : [
              '-c',
              'ulimit -u "$1" || exit 126; exec bash -c "$2"',
              'bash',
              String(maxProcesses),
              request.command,
            ]
      return new Promise<ShellOutcome>((resolve, reject) => {
        let child
        try {
          // node:child_process loads at the first command, not with this module.
          child = process.getBuiltinModule('node:child_process').spawn('bash', args, {
            cwd,
            env: { ...baseEnv, ...request.env },
            detached: true,
            stdio: ['ignore', 'pipe', 'pipe'],
          })
        } catch (cause) {
          reject(
            new IsoagentError('io', `cannot start bash: ${(cause as Error).message}`, { cause }),
          )
          return
        }
        const pid = child.pid
        let exitCode: number | null = null
        let exitSignal: string | null = null
        let exited = false
        let stdoutOpen = true
        let stderrOpen = true
        let timedOut = false
        let cancelled = false
        let pipesHeldOpen = false
        let backgroundKilled = false
        let survivors = 0
        let killing: Promise<void> | undefined
        let settled = false

        const cleanup = () => {
          clearTimeout(timer)
          request.signal.removeEventListener('abort', onAbort)
        }
        const finish = () => {
          if (settled || !exited || stdoutOpen || stderrOpen) return
          if (killing === undefined && pid !== undefined && liveGroupMembers(pid) > 0) {
            // bash is done and its pipes are closed, but it left processes running.
            backgroundKilled = true
            terminate()
            return
          }
          if (killing !== undefined) {
            void killing.then(done)
            return
          }
          done()
        }
        const done = () => {
          if (settled) return
          settled = true
          cleanup()
          if (pid !== undefined) untrackGroup(pid)
          resolve({
            exitCode,
            signal: exitSignal,
            timedOut,
            cancelled,
            pipesHeldOpen,
            backgroundKilled,
            survivors,
            durationMs: performance.now() - started,
          })
        }
        const terminate = () => {
          if (killing !== undefined || pid === undefined) return
          killing = killGroup(pid).then((left) => {
            survivors = left
            // Whatever still holds the pipes (a process outside the group) is cut off now.
            child.stdout?.destroy()
            child.stderr?.destroy()
          })
          void killing.then(finish)
        }
        const onAbort = () => {
          if (settled || killing !== undefined) return
          cancelled = true
          terminate()
        }
        const timer = setTimeout(() => {
          if (settled || killing !== undefined) return
          timedOut = true
          pipesHeldOpen = exited
          terminate()
        }, request.timeoutMs)

        child.on('error', (error) => {
          if (pid === undefined) {
            cleanup()
            settled = true
            reject(new IsoagentError('io', `cannot start bash: ${error.message}`, { cause: error }))
          }
        })
        if (pid === undefined) return
        // At host exit: SIGKILL at once, no grace.
        trackGroup(pid, 'SIGKILL')
        child.stdout!.on('data', (chunk: Uint8Array) => request.onStdout(chunk))
        child.stderr!.on('data', (chunk: Uint8Array) => request.onStderr(chunk))
        child.stdout!.on('close', () => {
          stdoutOpen = false
          finish()
        })
        child.stderr!.on('close', () => {
          stderrOpen = false
          finish()
        })
        child.on('exit', (code, signal) => {
          exited = true
          exitCode = code
          exitSignal = signal
          finish()
        })
        if (request.signal.aborted) onAbort()
        else request.signal.addEventListener('abort', onAbort, { once: true })
      })
    },

    async snapshot({ maxEntries, signal }): Promise<TreeSnapshot> {
      // Synchronous lstat is several times faster than its promise form for many small entries;
      // the walk yields to the event loop every WALK_SLICE_MS so it never blocks it for long.
      const entries = new Map<string, TreeEntry>()
      let truncated = false
      const list = (dir: string) => {
        try {
          return readdirSync(dir).sort()
        } catch {
          return []
        }
      }
      const stack = [{ dir: root, prefix: '', names: list(root), next: 0 }]
      let sliceStart = performance.now()
      while (stack.length > 0) {
        if (signal?.aborted) {
          // Stopped early: like a walk cut by its bound, it reports what it saw.
          truncated = true
          break
        }
        const top = stack[stack.length - 1]!
        if (top.next >= top.names.length) {
          stack.pop()
          continue
        }
        const name = top.names[top.next++]!
        const abs = nodePath.join(top.dir, name)
        let s
        try {
          s = lstatSync(abs, { bigint: true })
        } catch {
          continue
        }
        if (name === '.git' && s.isDirectory()) continue
        if (entries.size >= maxEntries) {
          truncated = true
          break
        }
        const path = top.prefix === '' ? name : `${top.prefix}/${name}`
        const kind = s.isDirectory()
          ? 'directory'
          : s.isFile()
            ? 'file'
            : s.isSymbolicLink()
              ? 'symlink'
              : 'other'
        entries.set(path, {
          kind,
          signature: `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.mode}`,
        })
        if (kind === 'directory') stack.push({ dir: abs, prefix: path, names: list(abs), next: 0 })
        if (performance.now() - sliceStart > WALK_SLICE_MS) {
          await new Promise<void>((resolve) => setImmediate(resolve))
          sliceStart = performance.now()
        }
      }
      return { entries, truncated }
    },
  }
}
