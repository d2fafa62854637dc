import type { Readable } from 'node:stream'
import type { BodyProgress } from '../../src/workspace/temp-files.ts'

/** Bytes gathered into one positioned write. */
const BATCH_BYTES = 1024 * 1024
/**
 * Bytes held while a write is in flight before the socket is paused. Pausing early lets the
 * kernel coalesce the socket's data into fewer, fuller reads: holding 8 MiB of 4 MiB batches
 * instead was slower at 1 GiB (measured under load, bench/download.ts).
 */
const HELD_BYTES = BATCH_BYTES

/** Writes `chunks` one after the other from `position`. */
export type WriteAt = (chunks: Buffer[], position: number) => Promise<void>

/**
 * Stream a Node body into a file from `position`: chunks are gathered in plain arrays (no Web
 * stream, no promise per chunk) into writes of about 1 MiB, one write in flight while the next
 * batch fills, the socket paused while the disk is behind. Each chunk is admitted before it is
 * kept; completed writes are reported in order. Settles after the last write; on failure the
 * stream is destroyed, and what was admitted before a body error is still written (so a caller
 * can resume after it).
 */
export function pipeToFile(
  stream: Readable,
  position: number,
  progress: BodyProgress,
  write: WriteAt,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let batch: Buffer[] = []
    let batched = 0
    let queued = 0
    let writing = false
    let ended = false
    /** The first failure, and whether the bytes admitted before it are still to be written. */
    let failure: { error: unknown; flush: boolean } | undefined
    const settle = () => {
      if (writing) return
      if (failure !== undefined) reject(failure.error)
      else if (ended && batched === 0) resolve()
    }
    const flush = () => {
      if (writing || batched === 0 || (failure !== undefined && !failure.flush)) return
      const chunks = batch
      const size = batched
      batch = []
      batched = 0
      writing = true
      const at = position + queued
      queued += size
      write(chunks, at).then(
        () => {
          writing = false
          progress.written(size)
          if (failure === undefined && stream.isPaused()) stream.resume()
          if (ended || batched >= BATCH_BYTES || failure !== undefined) flush()
          settle()
        },
        (error: unknown) => {
          writing = false
          fail(error, false)
          settle()
        },
      )
    }
    const fail = (error: unknown, flushAdmitted: boolean) => {
      if (failure !== undefined) return
      failure = { error, flush: flushAdmitted }
      stream.destroy()
      if (!flushAdmitted) {
        batch = []
        batched = 0
      }
      flush()
      settle()
    }
    stream.on('data', (chunk: Buffer) => {
      if (failure !== undefined) return
      try {
        progress.admit(chunk.length)
      } catch (error) {
        fail(error, false)
        return
      }
      batch.push(chunk)
      batched += chunk.length
      if (batched >= BATCH_BYTES) flush()
      if (writing && batched >= HELD_BYTES) stream.pause()
    })
    stream.once('end', () => {
      ended = true
      flush()
      settle()
    })
    stream.once('error', (error) => fail(error, true))
    stream.once('close', () => {
      if (!ended) fail(new Error('the response body closed before its end'), true)
    })
    // It failed (or was closed) before it was claimed: its error went to an earlier listener.
    if (stream.destroyed)
      fail(stream.errored ?? new Error('the response body closed before its end'), true)
    else if (stream.isPaused()) stream.resume()
  })
}
