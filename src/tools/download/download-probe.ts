import { IsoagentError } from '../../errors.ts'
import { redactUrl } from '../../net/url-rules.ts'
import { declaredLength, parseContentRange, strongEtag } from './content-range.ts'
import type { DownloadArgs } from './download-args.ts'
import { fatal, get, tooLarge, type Job } from './download-job.ts'
import { checkTarget, namedTarget, type Target } from './download-target.ts'

/** What the first request (`Range: bytes=0-0`) learned about the resource and the target. */
export interface Probe {
  /** The URL after redirects. */
  url: URL
  contentType: string | null
  /** The whole body, when the server ignored the range and the target needed no name. */
  whole: Response | undefined
  target: Target
  /** Whether the target existed before (and `overwrite` allowed replacing it). */
  existed: boolean
  total: number | undefined
  etag: string | undefined
  rangeSupported: boolean
}

/** The URL argument, or an `invalid_argument` naming it without its query. */
function parseUrl(input: string): URL {
  try {
    return new URL(input.trim())
  } catch {
    throw new IsoagentError('invalid_argument', `not a valid URL: ${redactUrl(input)}`)
  }
}

/** The size, strong ETag and range support the probe's answer shows, within `max_bytes`. */
async function sizeOf(
  job: Job,
  response: Response,
): Promise<Pick<Probe, 'total' | 'etag' | 'rangeSupported'>> {
  let total: number | undefined
  let etag: string | undefined
  let rangeSupported = false
  if (response.status === 206) {
    await response.body?.cancel().catch(() => undefined)
    const range = parseContentRange(response.headers.get('content-range'))
    if (range === undefined || range.first !== 0 || range.last !== 0 || range.total === undefined)
      throw fatal(
        `the server answered bytes=0-0 with Content-Range "${response.headers.get('content-range') ?? ''}"`,
      )
    total = range.total
    etag = strongEtag(response.headers)
    rangeSupported = true
  } else total = declaredLength(response)
  if (total !== undefined && total > job.maxBytes) {
    await response.body?.cancel().catch(() => undefined)
    throw tooLarge(total, job.maxBytes)
  }
  return { total, etag, rangeSupported }
}

/**
 * Ask for the first byte of `args.url`, name the target from the answer when `args.file_path`
 * is a folder (`target` undefined), check the target, and learn the size and range support.
 */
export async function probe(
  job: Job,
  args: DownloadArgs,
  target: Target | undefined,
  overwrite: boolean,
): Promise<Probe> {
  const first = await get(job, parseUrl(args.url), { range: 'bytes=0-0' }, job.signal)
  const url = first.finalUrl
  const response = first.response
  const contentType = response.headers.get('content-type')?.split(';')[0]?.trim() ?? null
  // A whole body (no range support) is not held open across a confirmation: fetched again.
  let whole: Response | undefined = response.status === 206 ? undefined : response
  if (target === undefined) {
    target = await namedTarget(job.context, args, response, url)
    if (whole !== undefined) {
      await whole.body?.cancel().catch(() => undefined)
      whole = undefined
    }
  }
  const existed = await checkTarget(job.context, target.path, target.display, overwrite)
  const size = await sizeOf(job, response)
  job.total = size.total
  return { url, contentType, whole, target, existed, ...size }
}
