import { IsoagentError } from '../../errors.ts'
import type { TempFile } from '../../workspace/temp-files.ts'
import { pump } from './body-pump.ts'
import { checkRange, strongEtag } from './content-range.ts'
import { DOWNLOAD_LIMITS } from './download-args.ts'
import { Fallback, fatal, get, retryable, type Job } from './download-job.ts'

/**
 * Ranges of a parallel download over `parts` connections: `parts` equal ranges, cut in pieces of
 * at most {@link DOWNLOAD_LIMITS.maxChunkBytes} when the file is large. Connections take the
 * pieces in file order, so the part written without a gap from byte 0 grows all along (the
 * SHA-256, computed in order, keeps up instead of reading most of the file back at the end).
 */
export function splitRanges(total: number, parts: number): [number, number][] {
  const size = Math.min(Math.ceil(total / parts), DOWNLOAD_LIMITS.maxChunkBytes)
  const ranges: [number, number][] = []
  for (let first = 0; first < total; first += size)
    ranges.push([first, Math.min(total, first + size) - 1])
  return ranges
}

/** What every request of one parallel download shares. */
interface RangeJob {
  job: Job
  file: TempFile
  url: URL
  total: number
  etag: string
  signal: AbortSignal
}

/** Open bytes `from`-`last` of the same resource (its ETag unchanged), else fail or fall back. */
async function openRange(r: RangeJob, from: number, last: number): Promise<Response> {
  const { etag } = r
  const { response } = await get(
    r.job,
    r.url,
    { range: `bytes=${from}-${last}`, 'if-range': etag },
    r.signal,
  )
  if (response.status !== 206) {
    await response.body?.cancel().catch(() => undefined)
    if (strongEtag(response.headers) === etag) throw new Fallback('range request answered whole')
    throw fatal('the resource changed during the download (If-Range no longer matched)', {
      etag,
      now: response.headers.get('etag'),
    })
  }
  checkRange(response, from, last, r.total)
  const now = strongEtag(response.headers)
  if (now !== undefined && now !== etag) {
    await response.body?.cancel().catch(() => undefined)
    throw fatal('the resource changed during the download (its ETag changed)', { etag, now })
  }
  return response
}

/** Download the range `first`-`last`, resuming where a retryable failure left it. */
async function downloadRange(r: RangeJob, [first, last]: [number, number]): Promise<void> {
  let done = 0
  const length = last - first + 1
  for (let attempts = 0; done < length; attempts++) {
    const response = await openRange(r, first + done, last)
    const local = { bytes: 0 }
    try {
      await pump(r.job, response.body, r.file, first + done, length - done, local)
      done += local.bytes
      if (done < length) throw new IsoagentError('transport', `range ${first}-${last} ended early`)
    } catch (error) {
      done += local.bytes
      if (!retryable(error) || attempts >= DOWNLOAD_LIMITS.retries) throw error
      r.job.retries++
    }
  }
}

/**
 * Throw the failure of a parallel download from its lanes' outcomes, if any lane failed: a
 * {@link Fallback} when one sequential request may still succeed, else the first error that is
 * not a lane stopped by another's failure.
 */
function throwFailure(job: Job, results: PromiseSettledResult<void>[]): void {
  if (!results.some((r) => r.status === 'rejected')) return
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []))
  const first =
    errors.find((e) => !(IsoagentError.is(e, 'cancelled') && !job.signal.aborted)) ?? errors[0]
  if (
    first instanceof Fallback ||
    (retryable(first) && !IsoagentError.is(first, 'rate_limited') && !job.signal.aborted)
  )
    throw new Fallback('parallel ranges failed')
  throw first
}

/**
 * Download `url` (`total` bytes, strong ETag `etag`) into `file` over `parts` connections, each
 * taking the next range of {@link splitRanges}; one failing lane stops the others. Throws
 * {@link Fallback} when the caller should try one sequential request instead.
 */
export async function parallel(
  job: Job,
  file: TempFile,
  url: URL,
  total: number,
  etag: string,
  parts: number,
): Promise<void> {
  const stop = new AbortController()
  const signal = AbortSignal.any([job.signal, stop.signal])
  const r: RangeJob = { job, file, url, total, etag, signal }
  const queue = splitRanges(total, parts)
  let next = 0
  const lane = async () => {
    while (next < queue.length) {
      if (signal.aborted) throw new IsoagentError('cancelled', 'the download was stopped')
      await downloadRange(r, queue[next++]!)
    }
  }
  const results = await Promise.allSettled(
    Array.from({ length: Math.min(parts, queue.length) }, () =>
      lane().catch((error: unknown) => {
        stop.abort(error)
        throw error
      }),
    ),
  )
  throwFailure(job, results)
}
