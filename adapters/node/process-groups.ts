import { readdirSync, readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'

/**
 * Process groups of child commands still running, each signalled if the host process exits
 * before it does (an 'exit' handler must be synchronous, so there is no grace period).
 */
const running = new Map<number, NodeJS.Signals>()
let exitHookInstalled = false

/** Send `signal` to every process in group `pgid`; a group that is gone already is fine. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal)
  } catch {
    // ESRCH: the group is gone already.
  }
}

/** Signal group `pgid` with `atExit` if the host process exits while it runs. */
export function trackGroup(pgid: number, atExit: NodeJS.Signals): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true
    process.once('exit', () => {
      for (const [group, signal] of running) signalGroup(group, signal)
    })
  }
  running.set(pgid, atExit)
}

/** The group has ended (or was stopped): forget it. */
export function untrackGroup(pgid: number): void {
  running.delete(pgid)
}

/** How long processes get after SIGTERM before the group gets SIGKILL (ms). */
export const KILL_GRACE_MS = 1_000
/** How long to wait for a SIGKILLed group to disappear before reporting survivors (ms). */
const KILL_WAIT_MS = 1_000
const POLL_MS = 20

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
export async function killGroup(pgid: number): Promise<number> {
  signalGroup(pgid, 'SIGTERM')
  const termUntil = performance.now() + KILL_GRACE_MS
  while (liveGroupMembers(pgid) > 0 && performance.now() < termUntil) await sleep(POLL_MS)
  if (liveGroupMembers(pgid) === 0) return 0
  signalGroup(pgid, 'SIGKILL')
  const killUntil = performance.now() + KILL_WAIT_MS
  while (liveGroupMembers(pgid) > 0 && performance.now() < killUntil) await sleep(POLL_MS)
  return liveGroupMembers(pgid)
}
