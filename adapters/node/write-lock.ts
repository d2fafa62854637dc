import * as fs from 'node:fs/promises'
import { hostname } from 'node:os'
import { IsoagentError } from '../../src/errors.ts'
import { keyedLock } from '../../src/workspace/adapter-kit.ts'
import { pidAlive } from './side-files.ts'

// The write lock of one file, across every workspace of this process and across processes: a
// process-wide queue per real path, then a lock file beside the target made with O_EXCL that
// names its holder. A holder that died (its pid is gone on this host) or has held it longer than
// LOCK_STALE_MS loses it; removing a dead holder's lock is itself done under a second lock file,
// so two waiters cannot both remove it and one of them the new holder's.

/** A lock file older than this is taken as abandoned, whoever holds it (ms). */
export const LOCK_STALE_MS = 30_000
/** A break lock older than this is removed blindly: its holder needed microseconds (ms). */
export const BREAK_STALE_MS = 5_000
/** How long a writer waits for the lock before it fails with `timeout` (ms). */
export const LOCK_WAIT_MS = 60_000

/** One queue per real path for the whole process (every workspace over the same folder). */
const inProcess = keyedLock()
const HOST = hostname()

/** Where a file's lock and break lock live. */
export interface LockFiles {
  /** The lock file's path. */
  lock: string
  /** The break lock's path. */
  breakLock: string
}

interface Holder {
  pid: number
  host: string
  token: string
  mtimeMs: number
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

async function readHolder(path: string): Promise<Holder | undefined> {
  try {
    const [text, s] = await Promise.all([fs.readFile(path, 'utf8'), fs.lstat(path)])
    const [pid, host, token] = text.trim().split(' ')
    return { pid: Number(pid), host: host ?? '', token: token ?? '', mtimeMs: s.mtimeMs }
  } catch {
    return undefined
  }
}

/** Whether the lock held by `holder` may be taken from it. */
function abandoned(holder: Holder): boolean {
  if (Date.now() - holder.mtimeMs > LOCK_STALE_MS) return true
  // A lock still being written (no pid yet) belongs to a live process.
  if (!Number.isInteger(holder.pid) || holder.pid <= 0) return false
  return holder.host === HOST && !pidAlive(holder.pid)
}

/** Remove the lock at `files.lock` when it is (still) abandoned, under the break lock. */
async function breakAbandoned(files: LockFiles): Promise<void> {
  try {
    await (await fs.open(files.breakLock, 'wx')).close()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    const s = await fs.lstat(files.breakLock).catch(() => undefined)
    if (s !== undefined && Date.now() - s.mtimeMs > BREAK_STALE_MS)
      await fs.unlink(files.breakLock).catch(() => undefined)
    return
  }
  try {
    const holder = await readHolder(files.lock)
    if (holder !== undefined && abandoned(holder)) await fs.unlink(files.lock).catch(() => {})
  } finally {
    await fs.unlink(files.breakLock).catch(() => undefined)
  }
}

/** Take the lock file; returns the token written into it. */
async function acquire(files: LockFiles, what: string): Promise<string> {
  const token = Math.random().toString(36).slice(2)
  const deadline = Date.now() + LOCK_WAIT_MS
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await fs.open(files.lock, 'wx')
      try {
        await handle.writeFile(`${process.pid} ${HOST} ${token}\n`)
      } finally {
        await handle.close()
      }
      return token
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const holder = await readHolder(files.lock)
    if (holder !== undefined && abandoned(holder)) {
      await breakAbandoned(files)
      continue
    }
    if (Date.now() > deadline)
      throw new IsoagentError('timeout', `${what} stayed locked by another writer`, {
        data: { duration_ms: LOCK_WAIT_MS, holder_pid: holder?.pid ?? null },
      })
    await sleep(Math.min(20, 1 + attempt) * (0.5 + Math.random()))
  }
}

/** Remove the lock file when it is still ours (it may have been broken while we were stopped). */
async function release(files: LockFiles, token: string): Promise<void> {
  const holder = await readHolder(files.lock)
  if (holder?.token === token) await fs.unlink(files.lock).catch(() => undefined)
}

/**
 * Run `run` holding the write lock of the file whose real path is `key`: first this process's
 * queue for `key`, then the lock file. `what` names the file in a timeout's message.
 */
export function withWriteLock<T>(
  key: string,
  files: () => LockFiles,
  what: string,
  run: () => Promise<T>,
): Promise<T> {
  return inProcess(key, async () => {
    const paths = files()
    const token = await acquire(paths, what)
    try {
      return await run()
    } finally {
      await release(paths, token)
    }
  })
}
