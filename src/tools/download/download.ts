import { IsoagentError } from '../../errors.ts'
import { MUTATING, type ToolContext, type ToolSpec } from '../../kernel/tool-spec.ts'
import { withDeadline } from '../../net/http-failure.ts'
import type { NetContext } from '../../net/http-transport.ts'
import { redactUrl } from '../../net/url-rules.ts'
import { toolSuccess, type ToolResult } from '../../tool-result.ts'
import type { TempFiles } from '../../workspace/temp-files.ts'
import {
  DOWNLOAD_DESCRIPTION,
  DOWNLOAD_LIMITS,
  DOWNLOAD_PARAMETERS,
  type DownloadArgs,
} from './download-args.ts'
import type { Job } from './download-job.ts'
import { probe, type Probe } from './download-probe.ts'
import { checkTarget, namesFolder, resolveTarget } from './download-target.ts'
import { transfer, type HeldFile, type Transfer } from './download-transfer.ts'

export { DOWNLOAD_LIMITS, type DownloadArgs } from './download-args.ts'
export { splitRanges } from './parallel.ts'

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

/** A new job of `args` under its own deadline. */
function newJob(net: NetContext, args: DownloadArgs, context: ToolContext, timeoutMs: number): Job {
  return {
    net,
    signal: withDeadline(context.signal, timeoutMs),
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
}

/** Check the content's SHA-256, sync and move the temp file onto the target. */
async function verifyAndPromote(
  job: Job,
  held: HeldFile,
  args: DownloadArgs,
  display: string,
  bytes: number,
): Promise<{ sha256: string; overwritten: boolean }> {
  const file = held.file!
  const sha256 = await file.sha256(bytes)
  const expected = args.expected_sha256?.toLowerCase()
  if (expected !== undefined && expected !== sha256)
    throw new IsoagentError(
      'version_conflict',
      `the content's SHA-256 is ${sha256}, not the expected ${expected}; nothing was written`,
      { data: { path: display, expected, actual: sha256 } },
    )
  await file.sync()
  if (job.signal.aborted) throw job.signal.reason
  const { overwritten } = await file.promote({ overwrite: args.overwrite === true })
  held.file = undefined
  return { sha256, overwritten }
}

/** The success result: a one-line summary and the metadata of the download. */
function downloaded(
  job: Job,
  p: Probe,
  t: Transfer,
  done: { sha256: string; overwritten: boolean },
): ToolResult {
  const { bytes, strategy, parts } = t
  const { sha256 } = done
  const display = p.target.display
  const seconds = (Date.now() - job.startedAt) / 1000
  const shownUrl = redactUrl(p.url)
  const shownParts = parts >= 2 && strategy === 'parallel_range' ? `, ${parts} connections` : ''
  return toolSuccess(
    'download',
    `Downloaded ${formatBytes(bytes)} to ${display} in ${seconds.toFixed(1)} s (${strategy}${shownParts}; sha256 ${sha256})`,
    {
      file_path: display,
      bytes,
      content_type: p.contentType,
      strategy,
      connections: strategy === 'parallel_range' ? parts : 1,
      range_supported: p.rangeSupported,
      overwritten: done.overwritten || p.existed,
      sha256,
      url: shownUrl,
      redirects: job.redirects,
      retries: job.retries,
      address_check: job.addressCheck,
      duration_ms: Math.round(seconds * 1000),
      source_anchors: [{ path: display, url: shownUrl, sha256 }],
    },
  )
}

/** A failure as the caller should see it: `timeout` past the deadline, `cancelled` when stopped. */
function failureOf(error: unknown, job: Job, timeoutMs: number): unknown {
  const context = job.context
  if (
    job.signal.aborted &&
    !context.signal.aborted &&
    !IsoagentError.is(error, 'permission_denied')
  )
    return new IsoagentError('timeout', `the download took longer than ${timeoutMs / 1000} s`, {
      data: { duration_ms: timeoutMs },
    })
  if (context.signal.aborted) return new IsoagentError('cancelled', 'the download was cancelled')
  return error
}

/** `download`'s run: probe, transfer into a temp file, verify, promote, report. */
async function runDownload(
  net: NetContext,
  args: DownloadArgs,
  context: ToolContext,
): Promise<ToolResult> {
  const temps: TempFiles | undefined = context.workspace.tempFiles
  if (temps === undefined)
    throw new IsoagentError('unsupported', 'this workspace cannot stream files to disk')
  const overwrite = args.overwrite === true
  const timeoutMs = (args.timeout ?? DOWNLOAD_LIMITS.timeoutS.default) * 1000
  const job = newJob(net, args, context, timeoutMs)
  const target = namesFolder(args.file_path)
    ? undefined
    : await resolveTarget(context, args.file_path, () => '')
  if (target !== undefined) await checkTarget(context, target.path, target.display, overwrite)
  const held: HeldFile = { file: undefined }
  try {
    const found = await probe(job, args, target, overwrite)
    const written = await transfer(job, temps, held, found, args.connections)
    const done = await verifyAndPromote(job, held, args, found.target.display, written.bytes)
    return downloaded(job, found, written, done)
  } catch (error) {
    throw failureOf(error, job, timeoutMs)
  } finally {
    await held.file?.discard()
  }
}

/** The `download` tool over `net` (the session's network options). */
export function createDownloadTool(net: NetContext = {}): ToolSpec<DownloadArgs> {
  return {
    name: 'download',
    pathArguments: ['file_path'],
    description: DOWNLOAD_DESCRIPTION,
    parameters: DOWNLOAD_PARAMETERS,
    available: (c) => c.write && c.localRoot !== undefined,
    scheduling: { ...MUTATING, max_parallelism: 4 },
    primaryArgument: 'file_path',
    redactArgs: (args) => ({ ...args, url: redactUrl(args.url) }),
    ownDeadlineMs: (args) => (args.timeout ?? DOWNLOAD_LIMITS.timeoutS.default) * 1000,
    run: (args, context) => runDownload(net, args, context),
  }
}

/** `download` with the default network options. */
export const downloadTool = createDownloadTool()
