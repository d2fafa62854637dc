// The in-page locking of browser workspaces, per file-system name.

/**
 * Per file-system name, in this JavaScript realm: a mutex serialising every mutation (so write
 * preconditions are checked and applied without another in-page write in between) and a
 * readers/writer gate that keeps reads out of the short moment a replaced file is swapped in.
 */
export interface Guard {
  tail: Promise<unknown>
  readers: number
  swapping: Promise<void> | undefined
  drained: (() => void) | undefined
  lastStamp: number
}

const guards = new Map<string, Guard>()

/** The guard of the file system `name`, made at its first use in this realm. */
export function guardFor(name: string): Guard {
  let guard = guards.get(name)
  if (guard === undefined) {
    guard = {
      tail: Promise.resolve(),
      readers: 0,
      swapping: undefined,
      drained: undefined,
      lastStamp: 0,
    }
    guards.set(name, guard)
  }
  return guard
}

/** Runs `run` after every mutation queued before it (the mutex). */
export function serialised<T>(guard: Guard, run: () => Promise<T>): Promise<T> {
  const result = guard.tail.then(run, run)
  guard.tail = result.catch(() => undefined)
  return result
}

/** Runs `run` as a reader: after any swap in progress, which waits for it in turn. */
export async function shared<T>(guard: Guard, run: () => Promise<T>): Promise<T> {
  while (guard.swapping !== undefined) await guard.swapping
  guard.readers++
  try {
    return await run()
  } finally {
    if (--guard.readers === 0 && guard.drained !== undefined) {
      const drained = guard.drained
      guard.drained = undefined
      drained()
    }
  }
}

/** Runs `run` with no reader inside. Only called under {@link serialised}: one at a time. */
export async function exclusive<T>(guard: Guard, run: () => Promise<T>): Promise<T> {
  let release!: () => void
  guard.swapping = new Promise<void>((done) => (release = done))
  try {
    while (guard.readers > 0) await new Promise<void>((done) => (guard.drained = done))
    return await run()
  } finally {
    guard.swapping = undefined
    release()
  }
}

/** Monotonic per name in this page, so two writes in one millisecond still differ. */
export function nextStamp(guard: Guard): Date {
  guard.lastStamp = Math.max(Date.now(), guard.lastStamp + 1)
  return new Date(guard.lastStamp)
}
