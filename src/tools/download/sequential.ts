import { IsoagentError } from '../../errors.ts'
import type { TempFile } from '../../workspace/temp-files.ts'
import { pump } from './body-pump.ts'
import { checkRange, declaredLength } from './content-range.ts'
import { DOWNLOAD_LIMITS } from './download-args.ts'
import { fatal, get, retryable, tooLarge, type Job } from './download-job.ts'

/** What a broken-off sequential body may resume from: the strong ETag and the full size. */
export interface Resume {
  etag: string
  total: number
}

/** The plain GET's response after its checks (no 206, not over `max_bytes`), and its length. */
async function checkedWhole(
  job: Job,
  url: URL,
  first: Response | undefined,
): Promise<{ response: Response; declared: number | undefined }> {
  const response = first ?? (await get(job, url, {}, job.signal)).response
  if (response.status === 206) {
    await response.body?.cancel().catch(() => undefined)
    throw fatal('the server answered a plain GET with 206 Partial Content')
  }
  const declared = declaredLength(response)
  if (declared !== undefined && declared > job.maxBytes) {
    await response.body?.cancel().catch(() => undefined)
    throw tooLarge(declared, job.maxBytes)
  }
  return { response, declared }
}

/** The rest of the resource from byte `written` on, if it is still the same resource. */
async function resumeFrom(job: Job, url: URL, written: number, resume: Resume) {
  const last = resume.total - 1
  const { response } = await get(
    job,
    url,
    { range: `bytes=${written}-${last}`, 'if-range': resume.etag },
    job.signal,
  )
  if (response.status !== 206) {
    await response.body?.cancel().catch(() => undefined)
    throw fatal('the resource changed during the download (If-Range no longer matched)')
  }
  checkRange(response, written, last, resume.total)
  return response
}

/**
 * Download `url` with one request (`first`, when given, is its response already open) into
 * `file`; a body that breaks off resumes with a range request when `resume` allows it.
 * Returns the bytes written.
 */
export async function sequential(
  job: Job,
  file: TempFile,
  url: URL,
  first: Response | undefined,
  resume: Resume | undefined,
): Promise<number> {
  const whole = await checkedWhole(job, url, first)
  const declared = whole.declared
  let response = whole.response
  if (resume !== undefined && declared !== undefined && declared !== resume.total)
    resume = undefined
  job.total ??= declared
  let written = 0
  for (let resumes = 0; ; resumes++) {
    const local = { bytes: 0 }
    try {
      const limit = declared === undefined ? undefined : declared - written
      await pump(job, response.body, file, written, limit, local)
      written += local.bytes
      break
    } catch (error) {
      written += local.bytes
      if (resume === undefined || !retryable(error) || resumes >= DOWNLOAD_LIMITS.retries)
        throw error
      job.retries++
      response = await resumeFrom(job, url, written, resume)
    }
  }
  if (declared !== undefined && written !== declared)
    throw new IsoagentError(
      'transport',
      `the body was truncated: ${written} of ${declared} bytes arrived`,
    )
  return written
}
