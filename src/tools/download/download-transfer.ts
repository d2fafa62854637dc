import { IsoagentError } from '../../errors.ts'
import type { TempFile, TempFiles } from '../../workspace/temp-files.ts'
import { DOWNLOAD_LIMITS } from './download-args.ts'
import { Fallback, type Job } from './download-job.ts'
import type { Probe } from './download-probe.ts'
import { parallel } from './parallel.ts'
import { sequential } from './sequential.ts'

/** How the bytes came: one request, parallel ranges, or one request after ranges failed. */
export type Strategy = 'sequential' | 'parallel_range' | 'sequential_fallback'

/** What a transfer wrote. */
export interface Transfer {
  bytes: number
  strategy: Strategy
  /** Connections planned (parallel when 2 or more). */
  parts: number
}

/** The temp file of a download, held where the caller discards it whatever happens. */
export interface HeldFile {
  file: TempFile | undefined
}

/** Connections worth opening: with ranges and a strong ETag, one per {@link DOWNLOAD_LIMITS.minChunkBytes}. */
function plannedParts(p: Probe, connections: number | undefined): number {
  const wanted = connections ?? DOWNLOAD_LIMITS.connections.default
  return p.rangeSupported && p.etag !== undefined && p.total !== undefined
    ? Math.min(wanted, Math.floor(p.total / DOWNLOAD_LIMITS.minChunkBytes))
    : 1
}

/** Parallel ranges into `held.file`; on {@link Fallback} a fresh temp file and one request. */
async function parallelOrFallback(
  job: Job,
  temps: TempFiles,
  held: HeldFile,
  p: Probe,
  parts: number,
): Promise<Transfer> {
  try {
    await parallel(job, held.file!, p.url, p.total!, p.etag!, parts)
    return { bytes: p.total!, strategy: 'parallel_range', parts }
  } catch (error) {
    if (!(error instanceof Fallback)) throw error
    await held.file!.discard()
    held.file = await temps.create(p.target.path)
    job.received = 0
    const bytes = await sequential(job, held.file, p.url, undefined, undefined)
    return { bytes, strategy: 'sequential_fallback', parts }
  }
}

/**
 * Write the resource the probe found into a new temp file beside the target (`held.file`), in
 * parallel ranges when the server allows, else with one request that can resume.
 */
export async function transfer(
  job: Job,
  temps: TempFiles,
  held: HeldFile,
  p: Probe,
  connections: number | undefined,
): Promise<Transfer> {
  const parts = plannedParts(p, connections)
  held.file = await temps.create(p.target.path)
  let result: Transfer
  if (parts >= 2) result = await parallelOrFallback(job, temps, held, p, parts)
  else {
    const resume =
      p.rangeSupported && p.etag !== undefined && p.total !== undefined
        ? { etag: p.etag, total: p.total }
        : undefined
    const bytes = await sequential(job, held.file, p.url, p.whole, resume)
    result = { bytes, strategy: 'sequential', parts }
  }
  if (
    p.total !== undefined &&
    result.bytes !== p.total &&
    result.strategy !== 'sequential_fallback'
  )
    throw new IsoagentError(
      'transport',
      `the body was truncated: ${result.bytes} of ${p.total} bytes arrived`,
    )
  return result
}
