import { IsoagentError } from '../../errors.ts'
import type { BodyProgress, TempFile } from '../../workspace/temp-files.ts'
import { fatal, reportProgress, type Job } from './download-job.ts'

/** Bytes gathered before one write to the temp file. */
const WRITE_BATCH_BYTES = 1024 * 1024

/**
 * Read `body` and write it into `file` from `position`, in writes of about 1 MiB with one
 * write in flight while the next batch is read; every chunk is admitted first. What was
 * admitted before the body broke off is still written; `written` reports completed writes.
 */
async function readInto(
  body: ReadableStream<Uint8Array>,
  file: TempFile,
  position: number,
  progress: BodyProgress,
): Promise<void> {
  const reader = body.getReader()
  let batch: Uint8Array[] = []
  let batched = 0
  let queued = 0
  let writing: Promise<void> = Promise.resolve()
  const flush = async () => {
    if (batched === 0) return
    const chunks = batch
    const size = batched
    batch = []
    batched = 0
    await writing
    const at = position + queued
    queued += size
    writing = file.write(chunks, at).then(() => progress.written(size))
    writing.catch(() => undefined)
  }
  try {
    for (;;) {
      const { done: end, value } = await reader.read()
      if (end) break
      progress.admit(value.length)
      batch.push(value)
      batched += value.length
      if (batched >= WRITE_BATCH_BYTES) await flush()
    }
    await flush()
    await writing
  } catch (error) {
    await reader.cancel().catch(() => undefined)
    if (!IsoagentError.is(error)) await flush().catch(() => undefined)
    await writing.catch(() => undefined)
    throw error
  } finally {
    reader.releaseLock()
  }
}

/** The admission of a body's chunks: at most `limit` bytes from it, `max_bytes` over the job. */
function bodyProgress(job: Job, limit: number | undefined, done: { bytes: number }): BodyProgress {
  let admitted = 0
  return {
    admit(bytes) {
      if (limit !== undefined && admitted + bytes > limit)
        throw fatal(`the server sent more bytes than it declared (${limit})`)
      if (job.received + bytes > job.maxBytes)
        throw new IsoagentError(
          'too_large',
          `the download is larger than max_bytes (${job.maxBytes})`,
          { data: { max_bytes: job.maxBytes } },
        )
      admitted += bytes
      job.received += bytes
      reportProgress(job)
    },
    written(bytes) {
      done.bytes += bytes
    },
  }
}

/**
 * Stream `body` into `file` from `position`: through the temp file's own fast path when it
 * takes the body, else read here. `limit` is the most bytes this body may give; `max_bytes`
 * holds over the whole job. `done.bytes` counts the bytes written so far, also when it fails.
 */
export async function pump(
  job: Job,
  body: ReadableStream<Uint8Array> | null,
  file: TempFile,
  position: number,
  limit: number | undefined,
  done: { bytes: number },
): Promise<void> {
  if (body === null) return
  const progress = bodyProgress(job, limit, done)
  try {
    await (file.writeBody?.(body, position, progress) ?? readInto(body, file, position, progress))
  } catch (error) {
    if (IsoagentError.is(error) || job.signal.aborted) throw error
    throw new IsoagentError(
      'transport',
      `the response body broke off: ${String((error as Error).message ?? error)}`,
      { cause: error },
    )
  }
}
