import { IsoagentError } from '../../errors.ts'
import { MUTATING, type ToolContext, type ToolSpec } from '../../kernel/tool-spec.ts'
import { httpStatusError, MAX_RETRY_AFTER_MS, withDeadline } from '../../net/http-failure.ts'
import type { AddressCheck, NetContext } from '../../net/http-transport.ts'
import { safeFetch } from '../../net/safe-fetch.ts'
import { redactUrl } from '../../net/url-rules.ts'
import { toolSuccess } from '../../tool-result.ts'
import type { BodyProgress, TempFile } from '../../workspace/temp-files.ts'
import { WorkspacePath } from '../../workspace/workspace-path.ts'
import { parseContentRange, strongEtag } from './content-range.ts'
import { dispositionName, sanitizeFileName, urlName } from './file-name.ts'

const MiB = 1024 * 1024
/** Limits of `download`. */
export const DOWNLOAD_LIMITS = {
  maxBytes: { default: 512 * MiB, max: 8 * 1024 * MiB },
  timeoutS: { default: 300, max: 3600 },
  connections: { default: 4, max: 4 },
  /** Smallest range of a parallel download. */
  minChunkBytes: 2 * MiB,
  /** Largest range one request of a parallel download asks for. */
  maxChunkBytes: 32 * MiB,
  /** Retries of one request (statuses 408, 429, 5xx and I/O failures). */
  retries: 3,
  /** Least time between two progress events. */
  progressMs: 250,
} as const

/** Arguments of `download`. */
export interface DownloadArgs {
  url: string
  file_path: string
  overwrite?: boolean
  connections?: number
  max_bytes?: number
  timeout?: number
  expected_sha256?: string
}

type Strategy = 'sequential' | 'parallel_range' | 'sequential_fallback'

interface Job {
  net: NetContext
  signal: AbortSignal
  context: ToolContext
  maxBytes: number
  received: number
  total: number | undefined
  retries: number
  startedAt: number
  lastProgress: number
  addressCheck: AddressCheck
  redirects: number
}

/** A failure no retry can mend (the resource changed, a lying server). */
function fatal(message: string, data: Record<string, unknown> = {}): IsoagentError {
  return new IsoagentError('transport', message, { data: { ...data, fatal: true } })
}

class Fallback extends Error {}

function retryable(error: unknown): error is IsoagentError {
  return IsoagentError.is(error, 'transport', 'rate_limited') && error.data.fatal !== true
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error)
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason as Error)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

async function withRetries<T>(
  job: Job,
  signal: AbortSignal,
  attempt: () => Promise<T>,
): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt()
    } catch (error) {
      if (!retryable(error) || n >= DOWNLOAD_LIMITS.retries || signal.aborted) throw error
      const after = error.data.retry_after_ms
      const delay = typeof after === 'number' ? after : Math.min(250 * 2 ** n, 4000)
      if (delay > MAX_RETRY_AFTER_MS) throw error
      job.retries++
      await sleep(delay, signal)
    }
  }
}

async function get(job: Job, url: URL, headers: Record<string, string>, signal: AbortSignal) {
  return withRetries(job, signal, async () => {
    const result = await safeFetch(
      url,
      { headers: { 'accept-encoding': 'identity', ...headers }, signal },
      job.net,
    )
    const failure = httpStatusError(result.response, result.finalUrl.host)
    if (failure !== undefined) {
      await result.response.body?.cancel().catch(() => undefined)
      throw failure
    }
    job.addressCheck = result.addressCheck
    job.redirects = Math.max(job.redirects, result.redirects)
    return result
  })
}

function reportProgress(job: Job): void {
  const now = Date.now()
  if (now - job.lastProgress < DOWNLOAD_LIMITS.progressMs) return
  job.lastProgress = now
  const seconds = Math.max((now - job.startedAt) / 1000, 0.001)
  job.context.emitOutput(
    `${JSON.stringify({ bytes: job.received, total: job.total ?? null, rate_bytes_per_s: Math.round(job.received / seconds) })}\n`,
  )
}

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

/**
 * Stream `body` into `file` from `position`: through the temp file's own fast path when it
 * takes the body, else read here. `limit` is the most bytes this body may give; `max_bytes`
 * holds over the whole job. `done.bytes` counts the bytes written so far, also when it fails.
 */
async function pump(
  job: Job,
  body: ReadableStream<Uint8Array> | null,
  file: TempFile,
  position: number,
  limit: number | undefined,
  done: { bytes: number },
): Promise<void> {
  if (body === null) return
  let admitted = 0
  const progress: BodyProgress = {
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

function declaredLength(response: Response): number | undefined {
  if (
    response.headers.has('content-encoding') &&
    response.headers.get('content-encoding') !== 'identity'
  )
    return undefined
  const text = response.headers.get('content-length')
  return text !== null && /^\d+$/.test(text.trim()) ? Number(text) : undefined
}

function checkRange(response: Response, first: number, last: number, total: number): void {
  const range = parseContentRange(response.headers.get('content-range'))
  if (range === undefined || range.first !== first || range.last !== last || range.total !== total)
    throw fatal(
      `the server answered bytes ${first}-${last}/${total} with Content-Range "${response.headers.get('content-range') ?? ''}"`,
    )
}

async function sequential(
  job: Job,
  file: TempFile,
  url: URL,
  first: Response | undefined,
  resume: { etag: string; total: number } | undefined,
): Promise<number> {
  let response = first ?? (await get(job, url, {}, job.signal)).response
  if (response.status === 206) {
    await response.body?.cancel().catch(() => undefined)
    throw fatal('the server answered a plain GET with 206 Partial Content')
  }
  const declared = declaredLength(response)
  if (declared !== undefined && declared > job.maxBytes) {
    await response.body?.cancel().catch(() => undefined)
    throw tooLarge(declared, job.maxBytes)
  }
  if (resume !== undefined && declared !== undefined && declared !== resume.total)
    resume = undefined
  job.total ??= declared
  let written = 0
  for (let resumes = 0; ; resumes++) {
    const local = { bytes: 0 }
    try {
      await pump(
        job,
        response.body,
        file,
        written,
        declared === undefined ? undefined : declared - written,
        local,
      )
      written += local.bytes
      break
    } catch (error) {
      written += local.bytes
      if (resume === undefined || !retryable(error) || resumes >= DOWNLOAD_LIMITS.retries)
        throw error
      job.retries++
      const last = resume.total - 1
      response = (
        await get(
          job,
          url,
          { range: `bytes=${written}-${last}`, 'if-range': resume.etag },
          job.signal,
        )
      ).response
      if (response.status !== 206) {
        await response.body?.cancel().catch(() => undefined)
        throw fatal('the resource changed during the download (If-Range no longer matched)')
      }
      checkRange(response, written, last, resume.total)
    }
  }
  if (declared !== undefined && written !== declared)
    throw new IsoagentError(
      'transport',
      `the body was truncated: ${written} of ${declared} bytes arrived`,
    )
  return written
}

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

async function parallel(
  job: Job,
  file: TempFile,
  url: URL,
  total: number,
  etag: string,
  parts: number,
) {
  const stop = new AbortController()
  const signal = AbortSignal.any([job.signal, stop.signal])
  const part = async ([first, last]: [number, number]) => {
    let done = 0
    const length = last - first + 1
    for (let attempts = 0; done < length; attempts++) {
      const { response } = await get(
        job,
        url,
        { range: `bytes=${first + done}-${last}`, 'if-range': etag },
        signal,
      )
      if (response.status !== 206) {
        await response.body?.cancel().catch(() => undefined)
        if (strongEtag(response.headers) === etag)
          throw new Fallback('range request answered whole')
        throw fatal('the resource changed during the download (If-Range no longer matched)', {
          etag,
          now: response.headers.get('etag'),
        })
      }
      checkRange(response, first + done, last, total)
      const now = strongEtag(response.headers)
      if (now !== undefined && now !== etag) {
        await response.body?.cancel().catch(() => undefined)
        throw fatal('the resource changed during the download (its ETag changed)', { etag, now })
      }
      const local = { bytes: 0 }
      try {
        await pump(job, response.body, file, first + done, length - done, local)
        done += local.bytes
        if (done < length)
          throw new IsoagentError('transport', `range ${first}-${last} ended early`)
      } catch (error) {
        done += local.bytes
        if (!retryable(error) || attempts >= DOWNLOAD_LIMITS.retries) throw error
        job.retries++
      }
    }
  }
  const queue = splitRanges(total, parts)
  let next = 0
  const lane = async () => {
    while (next < queue.length) {
      if (signal.aborted) throw new IsoagentError('cancelled', 'the download was stopped')
      await part(queue[next++]!)
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
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed === undefined) return
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

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = n / 1024
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${v.toFixed(1)} ${units[i]}`
}

async function resolveTarget(
  context: ToolContext,
  filePath: string,
  inferred: () => string,
): Promise<{ path: WorkspacePath; display: string }> {
  const intoDir = /[/\\]$/.test(filePath) || filePath === '.'
  const base = context.path(intoDir ? filePath.replace(/[/\\]+$/, '') || '.' : filePath)
  const path = intoDir
    ? context.path(
        WorkspacePath.display(base) === '.'
          ? inferred()
          : `${WorkspacePath.display(base)}/${inferred()}`,
      )
    : base
  if (path === '')
    throw new IsoagentError('is_directory', 'the workspace root is a directory, not a file')
  return { path, display: WorkspacePath.display(path) }
}

/**
 * The target of a download into a folder, named by the server (`Content-Disposition`) or the
 * URL, and authorized again now that the name is known: permission rules on the final path
 * (`deny: ['download(**\/*.sh)']`) decide before any byte is written.
 */
async function namedTarget(
  context: ToolContext,
  args: DownloadArgs,
  response: Response,
  url: URL,
): Promise<{ path: WorkspacePath; display: string }> {
  const name = sanitizeFileName(
    dispositionName(response.headers.get('content-disposition')) ?? urlName(url),
  )
  const target = await resolveTarget(context, args.file_path, () => name)
  await context.authorize({ ...args, file_path: target.display })
  return target
}

async function checkTarget(
  context: ToolContext,
  path: WorkspacePath,
  display: string,
  overwrite: boolean,
) {
  const stat = await context.workspace.stat(path)
  if (stat?.kind === 'directory')
    throw new IsoagentError(
      'is_directory',
      `${display} is a directory; name a file to download to`,
      {
        data: { path: display },
      },
    )
  if (stat !== undefined && !overwrite)
    throw new IsoagentError(
      'already_exists',
      `${display} exists; pass overwrite: true to replace it`,
      {
        data: { path: display },
      },
    )
  return stat !== undefined
}

/** The URL argument, or an `invalid_argument` naming it without its query. */
function parseUrl(input: string): URL {
  try {
    return new URL(input.trim())
  } catch {
    throw new IsoagentError('invalid_argument', `not a valid URL: ${redactUrl(input)}`)
  }
}

/** The `download` tool over `net` (the session's network options). */
export function createDownloadTool(net: NetContext = {}): ToolSpec<DownloadArgs> {
  return {
    name: 'download',
    pathArguments: ['file_path'],
    description:
      'Download a public http(s) URL to a file in the workspace, streaming to a temp file beside the target ' +
      'and moving it into place only when complete (nothing is left behind on failure). Uses up to 4 parallel ' +
      'range requests when the server supports them with a strong ETag. `file_path` ending in "/" picks the name ' +
      'from Content-Disposition or the URL. Fails if the file exists unless `overwrite` is true.',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['url', 'file_path'],
      properties: {
        url: {
          type: 'string',
          minLength: 1,
          maxLength: 8192,
          description: 'http(s) URL to download.',
        },
        file_path: {
          type: 'string',
          minLength: 1,
          description:
            'Target file (relative to the workspace root); ending in "/" = into that directory.',
        },
        overwrite: { type: 'boolean', description: 'Replace an existing file (default false).' },
        connections: {
          type: 'integer',
          minimum: 1,
          maximum: DOWNLOAD_LIMITS.connections.max,
          description: `Parallel range requests, 1..4 (default ${DOWNLOAD_LIMITS.connections.default}).`,
        },
        max_bytes: {
          type: 'integer',
          minimum: 1,
          maximum: DOWNLOAD_LIMITS.maxBytes.max,
          description: 'Largest download accepted (default 512 MiB, max 8 GiB).',
        },
        timeout: {
          type: 'number',
          exclusiveMinimum: 0,
          maximum: DOWNLOAD_LIMITS.timeoutS.max,
          description: 'Seconds for the whole download (default 300, max 3600).',
        },
        expected_sha256: {
          type: 'string',
          pattern: '^[0-9a-fA-F]{64}$',
          description:
            'SHA-256 (64 hex digits) the content must have; otherwise nothing is written.',
        },
      },
    },
    available: (c) => c.write && c.localRoot !== undefined,
    scheduling: { ...MUTATING, max_parallelism: 4 },
    primaryArgument: 'file_path',
    redactArgs: (args) => ({ ...args, url: redactUrl(args.url) }),
    ownDeadlineMs: (args) => (args.timeout ?? DOWNLOAD_LIMITS.timeoutS.default) * 1000,
    async run(args, context) {
      const temps = context.workspace.tempFiles
      if (temps === undefined)
        throw new IsoagentError('unsupported', 'this workspace cannot stream files to disk')
      const overwrite = args.overwrite === true
      const timeoutMs = (args.timeout ?? DOWNLOAD_LIMITS.timeoutS.default) * 1000
      const signal = withDeadline(context.signal, timeoutMs)
      const job: Job = {
        net,
        signal,
        context,
        maxBytes: args.max_bytes ?? DOWNLOAD_LIMITS.maxBytes.default,
        received: 0,
        total: undefined,
        retries: 0,
        startedAt: Date.now(),
        lastProgress: Date.now(),
        addressCheck: 'literal_only',
        redirects: 0,
      }
      const needsName = /[/\\]$/.test(args.file_path) || args.file_path === '.'
      let target = needsName ? undefined : await resolveTarget(context, args.file_path, () => '')
      if (target !== undefined) await checkTarget(context, target.path, target.display, overwrite)
      let file: TempFile | undefined
      try {
        const probe = await get(job, parseUrl(args.url), { range: 'bytes=0-0' }, signal)
        const url = probe.finalUrl
        const response = probe.response
        const contentType = response.headers.get('content-type')?.split(';')[0]?.trim() ?? null
        // A whole body (no range support) is not held open across a confirmation: fetched again.
        let whole: Response | undefined = response.status === 206 ? undefined : response
        if (target === undefined) {
          target = await namedTarget(context, args, response, url)
          if (whole !== undefined) {
            await whole.body?.cancel().catch(() => undefined)
            whole = undefined
          }
        }
        const existed = await checkTarget(context, target.path, target.display, overwrite)
        let total: number | undefined
        let etag: string | undefined
        let rangeSupported = false
        if (response.status === 206) {
          await response.body?.cancel().catch(() => undefined)
          const range = parseContentRange(response.headers.get('content-range'))
          if (
            range === undefined ||
            range.first !== 0 ||
            range.last !== 0 ||
            range.total === undefined
          )
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
        job.total = total
        const wanted = args.connections ?? DOWNLOAD_LIMITS.connections.default
        const parts =
          rangeSupported && etag !== undefined && total !== undefined
            ? Math.min(wanted, Math.floor(total / DOWNLOAD_LIMITS.minChunkBytes))
            : 1
        let strategy: Strategy = parts >= 2 ? 'parallel_range' : 'sequential'
        file = await temps.create(target.path)
        let bytes: number
        if (strategy === 'parallel_range') {
          try {
            await parallel(job, file, url, total!, etag!, parts)
            bytes = total!
          } catch (error) {
            if (!(error instanceof Fallback)) throw error
            await file.discard()
            file = await temps.create(target.path)
            strategy = 'sequential_fallback'
            job.received = 0
            bytes = await sequential(job, file, url, undefined, undefined)
          }
        } else {
          const resume =
            rangeSupported && etag !== undefined && total !== undefined
              ? { etag, total }
              : undefined
          bytes = await sequential(job, file, url, whole, resume)
        }
        if (total !== undefined && bytes !== total && strategy !== 'sequential_fallback')
          throw new IsoagentError(
            'transport',
            `the body was truncated: ${bytes} of ${total} bytes arrived`,
          )
        const sha256 = await file.sha256(bytes)
        const expected = args.expected_sha256?.toLowerCase()
        if (expected !== undefined && expected !== sha256)
          throw new IsoagentError(
            'version_conflict',
            `the content's SHA-256 is ${sha256}, not the expected ${expected}; nothing was written`,
            {
              data: { path: target.display, expected, actual: sha256 },
            },
          )
        await file.sync()
        if (signal.aborted) throw signal.reason
        const { overwritten } = await file.promote({ overwrite })
        file = undefined
        const seconds = (Date.now() - job.startedAt) / 1000
        const shownUrl = redactUrl(url)
        return toolSuccess(
          'download',
          `Downloaded ${formatBytes(bytes)} to ${target.display} in ${seconds.toFixed(1)} s (${strategy}${parts >= 2 && strategy === 'parallel_range' ? `, ${parts} connections` : ''}; sha256 ${sha256})`,
          {
            file_path: target.display,
            bytes,
            content_type: contentType,
            strategy,
            connections: strategy === 'parallel_range' ? parts : 1,
            range_supported: rangeSupported,
            overwritten: overwritten || existed,
            sha256,
            url: shownUrl,
            redirects: job.redirects,
            retries: job.retries,
            address_check: job.addressCheck,
            duration_ms: Math.round(seconds * 1000),
            source_anchors: [{ path: target.display, url: shownUrl, sha256 }],
          },
        )
      } catch (error) {
        if (
          signal.aborted &&
          !context.signal.aborted &&
          !IsoagentError.is(error, 'permission_denied')
        )
          throw new IsoagentError(
            'timeout',
            `the download took longer than ${timeoutMs / 1000} s`,
            {
              data: { duration_ms: timeoutMs },
            },
          )
        if (context.signal.aborted)
          throw new IsoagentError('cancelled', 'the download was cancelled')
        throw error
      } finally {
        await file?.discard()
      }
    },
  }
}

/** `download` with the default network options. */
export const downloadTool = createDownloadTool()

function tooLarge(size: number, max: number): IsoagentError {
  return new IsoagentError('too_large', `the resource is ${size} bytes; max_bytes is ${max}`, {
    data: { size, max_bytes: max },
  })
}
