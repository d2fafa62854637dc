import { closeSync, fstatSync, readSync, statSync } from 'node:fs'
import * as fs from 'node:fs/promises'
import { clipRange } from '../../src/workspace/adapter-kit.ts'
import type { WorkspacePath } from '../../src/workspace/workspace-path.ts'
import type { ByteRange, WorkspaceStat } from '../../src/workspace/workspace-services.ts'
import { resolveFast } from './local-dir-cache.ts'
import { fromErrno } from './local-errno.ts'
import { checkRegular, openFile, openSyncForRead } from './local-open.ts'
import type { LocalRoot } from './local-resolve.ts'

// Stat and reads of a local workspace's files: small ones with synchronous calls, the rest
// through file handles, and streams.

/** Reads up to this many bytes are served synchronously (see `syncMetadata`). */
export const SYNC_READ_MAX_BYTES = 1024 * 1024
/**
 * Reads into a caller's buffer (`readNow`'s `into`) are served synchronously up to this many
 * bytes: nothing is allocated, and a read from the page cache takes a few milliseconds.
 */
export const SYNC_READ_INTO_MAX_BYTES = 16 * 1024 * 1024

/** The version of a file: inode, size, and modification and change times in nanoseconds. */
export function versionOf(s: {
  mtimeNs: bigint
  size: bigint
  ino: bigint
  ctimeNs: bigint
}): string {
  return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`
}

/**
 * `n` bytes to read into, not zeroed (every byte handed out is overwritten by the read): small
 * ones come from Node's shared buffer pool, so reading many small files allocates little.
 */
function scratchBytes(n: number): Uint8Array {
  const b = Buffer.allocUnsafe(n)
  return new Uint8Array(b.buffer, b.byteOffset, n)
}

/** Facts about the real location `real` of `path`, or undefined when nothing is there. */
export async function statReal(
  root: LocalRoot,
  real: string,
  path: WorkspacePath,
): Promise<WorkspaceStat | undefined> {
  try {
    const s = root.syncIo
      ? statSync(real, { bigint: true, throwIfNoEntry: false })
      : await fs.stat(real, { bigint: true })
    if (s === undefined) return undefined
    return {
      path,
      kind: s.isDirectory() ? 'directory' : s.isFile() ? 'file' : 'other',
      size: s.isDirectory() ? 0 : Number(s.size),
      mtimeMs: Number(s.mtimeMs),
      mode: Number(s.mode) & 0o7777,
      version: versionOf(s),
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw fromErrno(error, path, 'stat')
  }
}

/** Facts about `path` (symlinks inside the root followed), or undefined when nothing is there. */
export const stat = (root: LocalRoot, path: WorkspacePath) =>
  statReal(root, resolveFast(root, path), path)

/** The largest read served synchronously, into `into` when given. */
const syncLimit = (into: Uint8Array | undefined) =>
  into === undefined
    ? SYNC_READ_MAX_BYTES
    : Math.max(SYNC_READ_MAX_BYTES, Math.min(into.length, SYNC_READ_INTO_MAX_BYTES))

/** A small read with synchronous calls; undefined when the span is too large for that. */
function readSmall(
  root: LocalRoot,
  path: WorkspacePath,
  range: ByteRange,
  into?: Uint8Array,
): Uint8Array | undefined {
  let fd: number
  try {
    fd = openSyncForRead(root, path)
  } catch (error) {
    throw fromErrno(error, path, 'open')
  }
  try {
    const s = fstatSync(fd)
    checkRegular(s, path)
    const [start, end] = clipRange(range, s.size)
    if (end - start > syncLimit(into)) return undefined
    const out =
      into !== undefined && end - start <= into.length
        ? into.subarray(0, end - start)
        : scratchBytes(end - start)
    let at = 0
    while (at < out.length) {
      const n = readSync(fd, out, at, out.length - at, start + at)
      if (n === 0) break
      at += n
    }
    return at === out.length ? out : out.subarray(0, at)
  } catch (error) {
    throw fromErrno(error, path, 'read')
  } finally {
    closeSync(fd)
  }
}

/** A read served with synchronous calls, when `syncIo` and it is small enough. */
export function readNow(
  root: LocalRoot,
  path: WorkspacePath,
  range: ByteRange = {},
  into?: Uint8Array,
): Uint8Array | undefined {
  // A span too large for a read at once is known before opening the file only without a
  // buffer; with one, the file's size decides (a request may ask for more than is there).
  if (
    !root.syncIo ||
    (into === undefined && range.length !== undefined && range.length > SYNC_READ_MAX_BYTES)
  )
    return undefined
  return readSmall(root, path, range, into)
}

/** Bytes `range` of the file at `path`, clipped to it. */
export async function readRange(
  root: LocalRoot,
  path: WorkspacePath,
  range: ByteRange = {},
): Promise<Uint8Array> {
  const now = readNow(root, path, range)
  if (now !== undefined) return now
  const handle = await openFile(root, path)
  try {
    const s = await handle.stat()
    checkRegular(s, path)
    const [start, end] = clipRange(range, s.size)
    const out = new Uint8Array(end - start)
    let at = 0
    while (at < out.length) {
      const { bytesRead } = await handle.read(out, at, out.length - at, start + at)
      if (bytesRead === 0) break
      at += bytesRead
    }
    return at === out.length ? out : out.subarray(0, at)
  } catch (error) {
    throw fromErrno(error, path, 'read')
  } finally {
    await handle.close()
  }
}

/** Bytes `range` of the file at `path` as a byte stream of `chunkBytes` chunks. */
export async function readStream(
  root: LocalRoot,
  path: WorkspacePath,
  range: ByteRange = {},
): Promise<ReadableStream<Uint8Array>> {
  const handle = await openFile(root, path)
  let position: number
  let remaining: number
  try {
    const s = await handle.stat()
    checkRegular(s, path)
    position = Math.min(Math.max(0, range.offset ?? 0), s.size)
    remaining = range.length === undefined ? Number.POSITIVE_INFINITY : Math.max(0, range.length)
  } catch (error) {
    await handle.close()
    throw fromErrno(error, path, 'read')
  }
  let closed = false
  const close = async () => {
    if (!closed) {
      closed = true
      await handle.close()
    }
  }
  // A byte stream: a BYOB reader has each chunk read into its own buffer; a default reader
  // gets a new chunk of chunkBytes each time.
  return new ReadableStream({
    type: 'bytes',
    autoAllocateChunkSize: root.chunkBytes,
    async pull(controller) {
      const request = controller.byobRequest!
      try {
        const view = request.view!
        const want = Math.min(view.byteLength, remaining)
        const into = new Uint8Array(view.buffer, view.byteOffset, want)
        // A chunk from the page cache takes well under a millisecond to copy: with
        // syncMetadata it is read in place instead of through the thread pool.
        const bytesRead =
          want === 0
            ? 0
            : root.syncIo
              ? readSync(handle.fd, into, 0, want, position)
              : (await handle.read(into, 0, want, position)).bytesRead
        if (bytesRead === 0) {
          await close()
          controller.close()
          request.respond(0)
          return
        }
        position += bytesRead
        remaining -= bytesRead
        request.respond(bytesRead)
      } catch (error) {
        await close()
        controller.error(fromErrno(error, path, 'read'))
      }
    },
    async cancel() {
      await close()
    },
  })
}
