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
