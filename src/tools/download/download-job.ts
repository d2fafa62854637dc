import { delay as wait } from '../../event-loop.ts'
import { IsoagentError } from '../../errors.ts'
import type { ToolContext } from '../../kernel/tool-spec.ts'
import { httpStatusError, MAX_RETRY_AFTER_MS } from '../../net/http-failure.ts'
import type { AddressCheck, NetContext } from '../../net/http-transport.ts'
import { safeFetch } from '../../net/safe-fetch.ts'
import { DOWNLOAD_LIMITS } from './download-args.ts'

/** One download in progress: its network, deadline, counters and what its requests saw. */
export interface Job {
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
export function fatal(message: string, data: Record<string, unknown> = {}): IsoagentError {
  return new IsoagentError('transport', message, { data: { ...data, fatal: true } })
}

/** Thrown when a parallel download should start over as one sequential request. */
export class Fallback extends Error {}

/** Whether another attempt may mend `error` (a transport failure or a rate limit, not fatal). */
export function retryable(error: unknown): error is IsoagentError {
  return IsoagentError.is(error, 'transport', 'rate_limited') && error.data.fatal !== true
}

/** The `too_large` failure of a resource of `size` bytes over `max`. */
export function tooLarge(size: number, max: number): IsoagentError {
  return new IsoagentError('too_large', `the resource is ${size} bytes; max_bytes is ${max}`, {
    data: { size, max_bytes: max },
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
      if (!(await wait(delay, signal))) throw signal.reason as Error
    }
  }
}

/** GET `url` with `headers` (no content coding), retried; a failing status is thrown. */
export async function get(
  job: Job,
  url: URL,
  headers: Record<string, string>,
  signal: AbortSignal,
) {
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

/** Emit a progress line (bytes, total, rate), at most every {@link DOWNLOAD_LIMITS.progressMs}. */
export function reportProgress(job: Job): void {
  const now = Date.now()
  if (now - job.lastProgress < DOWNLOAD_LIMITS.progressMs) return
  job.lastProgress = now
  const seconds = Math.max((now - job.startedAt) / 1000, 0.001)
  job.context.emitOutput(
    `${JSON.stringify({ bytes: job.received, total: job.total ?? null, rate_bytes_per_s: Math.round(job.received / seconds) })}\n`,
  )
}
