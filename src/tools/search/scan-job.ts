import { IsoagentError } from '../../errors.ts'
import type { FileScanJob, FileScanOutcome } from '../../workspace/file-scanner.ts'
import type { WorkspacePath } from '../../workspace/workspace-path.ts'
import type { FileReader } from './scan-file.ts'
import { compileLineMatcher, type LineMatcher } from './line-matcher.ts'
import { scanFile } from './scan-file.ts'

let compiled: { key: string; matcher: LineMatcher } | undefined

/**
 * Scan `paths` of `ws` for `job`, one outcome per path: the work a {@link FileScanner} runs on
 * each of its threads. It is the search tool's own scan, so the outcomes equal the tool's.
 */
export async function runFileScanJob(
  ws: FileReader,
  job: FileScanJob,
  paths: readonly WorkspacePath[],
  signal?: AbortSignal,
): Promise<FileScanOutcome[]> {
  const key = `${job.caseSensitive ? 's' : 'i'}${job.pattern}`
  if (compiled?.key !== key)
    compiled = { key, matcher: compileLineMatcher(job.pattern, job.caseSensitive) }
  const request = {
    matcher: compiled.matcher,
    keepText: job.keepText,
    firstOnly: job.firstOnly,
    context: job.context,
    afterLine: 0,
    shownThrough: 0,
    maxMatches: job.maxMatches,
  }
  const outcomes: FileScanOutcome[] = []
  for (const path of paths) {
    if (signal?.aborted) throw new IsoagentError('cancelled', 'search cancelled')
    try {
      outcomes.push({ result: await scanFile(ws, path, request, signal) })
    } catch (error) {
      if (IsoagentError.is(error, 'cancelled')) throw error
      const e = IsoagentError.is(error)
        ? error
        : new IsoagentError('internal', `scan of ${path} failed: ${String(error)}`)
      outcomes.push({ error: { code: e.code, message: e.message, data: e.data } })
    }
  }
  return outcomes
}

/** The error a {@link FileScanOutcome} carries, as an `IsoagentError` again. */
export function outcomeError(outcome: FileScanOutcome): IsoagentError | undefined {
  if (!('error' in outcome)) return undefined
  return new IsoagentError(outcome.error.code, outcome.error.message, { data: outcome.error.data })
}
