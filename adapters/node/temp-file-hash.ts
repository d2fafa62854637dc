import type { FileHandle } from 'node:fs/promises'
import { IsoagentError } from '../../src/errors.ts'
import { workerHash, type WorkerHash } from './hash-worker.ts'
import { WrittenPrefix } from './written-prefix.ts'

/** Bytes hashed on the main thread before the hash moves to the worker. */
export const INLINE_HASH_BYTES = 16 * 1024 * 1024
/** Least growth of the written prefix between two messages to the worker. */
const ADVANCE_BYTES = 8 * 1024 * 1024
const READ_BACK_BYTES = 1024 * 1024

/** The SHA-256 of a temp file, fed as its writes complete. */
export interface TempFileHash {
  /** `chunks` were written from `position`. */
  written(chunks: readonly Uint8Array[], position: number): void
  /** SHA-256 (lower-case hex) of bytes 0 to `length`, reading back what was not hashed yet. */
  digest(length: number, handle: FileHandle): Promise<string>
  /** Stop hashing; resolves once nothing reads the file's descriptor any more. */
  close(): Promise<void>
}

/**
 * The hash of the temp file open at `fd`: bytes written in order are hashed on this thread up
 * to {@link INLINE_HASH_BYTES} (small files never start the worker); past that the hash worker
 * takes over, hashing from byte 0 as the gap-free written prefix grows, so the main thread
 * spends no time hashing a large download and the digest waits only for the worker's lag.
 * Without a worker, or if it fails, the main thread reads the file back and hashes it.
 */
export async function fileHash(fd: number): Promise<TempFileHash> {
  // node:crypto loads on first use: the CLI's start-up never pays for it.
  const { createHash } = await import('node:crypto')
  let inline = createHash('sha256')
  let hashed = 0
  let worker: WorkerHash | undefined
  let sent = 0
  const prefix = new WrittenPrefix()
  const readBack = async (length: number, handle: FileHandle) => {
    const buffer = Buffer.allocUnsafe(READ_BACK_BYTES)
    while (hashed < length) {
      const want = Math.min(READ_BACK_BYTES, length - hashed)
      const { bytesRead } = await handle.read(buffer, 0, want, hashed)
      if (bytesRead === 0) throw new IsoagentError('io', 'temp file is shorter than written')
      inline.update(buffer.subarray(0, bytesRead))
      hashed += bytesRead
    }
    return inline.copy().digest('hex')
  }
  return {
    written(chunks, position) {
      let total = 0
      for (const c of chunks) total += c.length
      prefix.add(position, position + total)
      if (worker === undefined && position === hashed) {
        for (const c of chunks) inline.update(c)
        hashed += total
      }
      if (worker === undefined && prefix.length >= INLINE_HASH_BYTES) worker = workerHash(fd)
      if (worker !== undefined && prefix.length - sent >= ADVANCE_BYTES) {
        sent = prefix.length
        worker.advance(sent)
      }
    },
    async digest(length, handle) {
      if (worker === undefined && length >= INLINE_HASH_BYTES) worker = workerHash(fd)
      if (worker !== undefined) {
        try {
          return await worker.digest(length)
        } catch {
          // The worker failed: start again from byte 0 on this thread.
          await worker.close()
          inline = createHash('sha256')
          hashed = 0
        }
      }
      return readBack(length, handle)
    },
    async close() {
      await worker?.close()
    },
  }
}
