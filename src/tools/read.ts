import { IsoagentError } from '../errors.ts'
import { utf8Length } from '../text/bytes.ts'
import { toolFailure, toolSuccess, type ToolErrorKind, type ToolResult } from '../tool-result.ts'
import { describeError, errorKindOf } from '../kernel/error-kind.ts'
import {
  hasMoreLines,
  moreLinesMarker,
  rangeMetadata,
  readWindow,
  renderLine,
  sourceAnchor,
  READ_MAX_LINES,
  type ReadWindow,
} from './read-lines.ts'
import type { WindowLine } from '../text/line-window.ts'
import { READ_ONLY, type ToolContext, type ToolSpec } from '../kernel/tool-spec.ts'

/** Most files in one `files` batch. */
export const READ_MAX_FILES = 32
/** Default, smallest and largest `max_output_bytes` of a `files` batch. */
export const READ_BATCH_BUDGET = { default: 65536, min: 1024, max: 98304 } as const

interface FileRequest {
  path: string
  offset?: number
  limit?: number
}

interface ReadArgs {
  file_path?: string
  offset?: number
  limit?: number
  files?: FileRequest[]
  max_output_bytes?: number
}

const lineArgs = {
  offset: {
    type: 'integer',
    minimum: 0,
    description: '0-based index of the first line to return (default 0).',
  },
  limit: {
    type: 'integer',
    minimum: 1,
    description: `Lines to return (default and max ${READ_MAX_LINES}; larger values are clamped).`,
  },
} as const

export const readTool: ToolSpec<ReadArgs> = {
  name: 'read',
  pathArguments: ['file_path', 'files[].path'],
  timeoutMs: 60_000,
  description:
    'Read a UTF-8 text file as numbered lines (`%6d\\t<line>`, 1-based), or up to 32 files at once with `files` ' +
    'under a shared output budget. Long files are paged: follow the `continue with offset=N` hint.',
  parameters: {
    type: 'object',
    additionalProperties: false,
    properties: {
      file_path: {
        type: 'string',
        minLength: 1,
        description: 'Path of the file (relative to the workspace root).',
      },
      ...lineArgs,
      files: {
        type: 'array',
        minItems: 1,
        maxItems: READ_MAX_FILES,
        description:
          'Several files in one call (instead of file_path); each with its own offset/limit. ' +
          'When the budget cuts the batch, pass metadata.batch.continuation here unchanged to get the rest.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['path'],
          properties: { path: { type: 'string', minLength: 1 }, ...lineArgs },
        },
      },
      max_output_bytes: {
        type: 'integer',
        minimum: READ_BATCH_BUDGET.min,
        maximum: READ_BATCH_BUDGET.max,
        description: `Output budget shared by all files in files mode (default ${READ_BATCH_BUDGET.default}).`,
      },
    },
  },
  available: (c) => c.read,
  scheduling: READ_ONLY,
  primaryArgument: 'file_path',
  async run(args, context) {
    if ((args.file_path === undefined) === (args.files === undefined)) {
      throw new IsoagentError('invalid_argument', 'pass exactly one of file_path or files')
    }
    if (args.files !== undefined) {
      if (args.offset !== undefined || args.limit !== undefined) {
        throw new IsoagentError(
          'invalid_argument',
          'offset and limit go inside each files[] entry in files mode',
        )
      }
      return readFiles(args.files, args.max_output_bytes ?? READ_BATCH_BUDGET.default, context)
    }
    if (args.max_output_bytes !== undefined) {
      throw new IsoagentError('invalid_argument', 'max_output_bytes applies to files mode only')
    }
    return readSingle(args.file_path!, args.offset ?? 0, args.limit, context)
  },
}

async function readSingle(
  filePath: string,
  offset: number,
  limit: number | undefined,
  context: ToolContext,
) {
  const read = await readWindow(context, filePath, offset, limit)
  const { lines } = read.window
  const rendered = lines.map((line, i) => renderLine(offset + i + 1, line))
  const end = offset + lines.length
  if (hasMoreLines(read, end)) rendered.push(moreLinesMarker(end))
  const output = rendered.join('\n')
  return toolSuccess('read', output, {
    file_path: filePath,
    source_anchors: lines.length > 0 ? [sourceAnchor(filePath, offset, lines.length)] : [],
    range: rangeMetadata(read, lines.length, utf8Length(output)),
    file: { bytes: read.fileBytes, bom: read.window.bom, line_ending: read.window.eol },
  })
}

type FileOutcome =
  | { request: FileRequest; status: 'pending' }
  | { request: FileRequest; status: 'failed'; error: IsoagentError | unknown }
  | {
      request: FileRequest
      status: 'complete' | 'partial'
      read: ReadWindow
      returned: number
      bytes: number
    }

async function readFiles(
  files: FileRequest[],
  budget: number,
  context: ToolContext,
): Promise<ToolResult> {
  const seen = new Set<string>()
  for (const file of files) {
    const key = context.path(file.path)
    if (seen.has(key)) {
      throw new IsoagentError('invalid_argument', `duplicate path in files: ${file.path}`, {
        data: { path: file.path },
      })
    }
    seen.add(key)
  }

  const out: string[] = []
  let used = 0
  let stopped = false
  const outcomes: FileOutcome[] = []
  const fits = (text: string, reserve: number) => used + utf8Length(text) + 1 + reserve <= budget
  const push = (text: string) => {
    out.push(text)
    used += utf8Length(text) + 1
  }

  for (let i = 0; i < files.length; i++) {
    const request = files[i]!
    if (stopped) {
      outcomes.push({ request, status: 'pending' })
      continue
    }
    const header = `=== ${request.path} ===`
    let read: ReadWindow
    try {
      read = await readWindow(context, request.path, request.offset ?? 0, request.limit)
    } catch (error) {
      if (IsoagentError.is(error, 'cancelled')) throw error
      const line = `error: ${describeError(error)}`
      const reserve = continuationReserve(budget, files, i + 1)
      if (fits(header, utf8Length(line) + 1 + reserve)) {
        push(header)
        push(line)
        outcomes.push({ request, status: 'failed', error })
      } else {
        if (out.length === 0) throw budgetTooSmall(budget, request.path)
        stopped = true
        outcomes.push({ request, status: 'pending' })
      }
      continue
    }
    const reserve = continuationReserve(budget, files, i, read)
    if (!fits(header, reserve)) {
      if (out.length === 0) throw budgetTooSmall(budget, request.path)
      stopped = true
      outcomes.push({ request, status: 'pending' })
      continue
    }
    push(header)
    const start = used
    let returned = 0
    for (const line of read.window.lines) {
      let text = renderLine(read.offset + returned + 1, line)
      if (!fits(text, reserve)) {
        // A line longer than the whole budget is cut to fit when nothing else was shown yet, so
        // feeding the continuation back always makes progress.
        const room = budget - used - 1 - reserve
        const cut = i === 0 && returned === 0 ? fitLine(read.offset + 1, line, room, budget) : null
        if (cut === null) {
          stopped = true
          break
        }
        text = cut
      }
      push(text)
      returned++
    }
    const end = read.offset + returned
    if (!stopped && hasMoreLines(read, end)) {
      const marker = moreLinesMarker(end)
      if (fits(marker, continuationReserve(budget, files, i + 1))) push(marker)
    }
    outcomes.push({
      request,
      status: stopped ? 'partial' : 'complete',
      read,
      returned,
      bytes: used - start,
    })
  }

  const continuation = stopped ? continuationOf(outcomes) : []
  if (continuation.length > 0) {
    const full = fullMarker(budget, continuation)
    push(used + utf8Length(full) + 1 <= budget ? full : shortMarker(budget))
  }
  const output = out.join('\n')

  const failures = outcomes.filter((o) => o.status === 'failed')
  const failed = failures.length
  const read = outcomes.filter((o) => o.status === 'complete' || o.status === 'partial') as Extract<
    FileOutcome,
    { read: ReadWindow }
  >[]
  const metadata = {
    batch: {
      status: failed > 0 ? 'partial_failure' : stopped ? 'partial' : 'complete',
      requested_files: files.length,
      successful_files: read.length,
      failed_files: failed,
      completed_files: files.length - continuation.length,
      returned_lines: read.reduce((n, o) => n + o.returned, 0),
      max_output_bytes: budget,
      output_bytes: utf8Length(output),
      truncated: stopped,
      continuation,
    },
    files: outcomes.map((o) => fileMetadata(o)),
    source_anchors: read
      .filter((o) => o.returned > 0)
      .map((o) => sourceAnchor(o.request.path, o.read.offset, o.returned)),
  }
  if (failed === files.length) {
    return toolFailure('read', output, allFailedKind(failures.map((o) => o.error)), metadata)
  }
  return toolSuccess('read', output, metadata)
}

/**
 * The `errorKind` of a batch in which every file failed: the first file's kind when every file
 * failed the same way (one missing file is `not_found`, as with `file_path`), else
 * `partial_failure{failed, total}`.
 */
function allFailedKind(errors: unknown[]): ToolErrorKind {
  const kinds = errors.map((error) => errorKindOf(error, 'read'))
  const first = kinds[0]!
  return kinds.every((k) => k.type === first.type)
    ? first
    : { type: 'partial_failure', failed: errors.length, total: errors.length }
}

function fileMetadata(o: FileOutcome) {
  switch (o.status) {
    case 'pending':
      return { path: o.request.path, status: o.status }
    case 'failed':
      return { path: o.request.path, status: o.status, error: errorSummary(o.error) }
    default:
      return {
        path: o.request.path,
        status: o.status,
        range: rangeMetadata(o.read, o.returned, o.bytes),
      }
  }
}

function errorSummary(error: unknown) {
  return IsoagentError.is(error)
    ? { code: error.code, message: error.message }
    : { code: 'internal', message: describeError(error) }
}

/**
 * Line `lineNumber` rendered within `room` bytes (its text cut on a code point boundary and
 * marked), or null when not even the number and the marker fit.
 */
function fitLine(
  lineNumber: number,
  line: WindowLine,
  room: number,
  budget: number,
): string | null {
  const prefix = `${String(lineNumber).padStart(6)}\t`
  const marker = ` … (line cut to fit max_output_bytes=${budget})`
  let left = room - utf8Length(prefix) - utf8Length(marker)
  if (left < 0) return null
  let end = 0
  for (const char of line.text) {
    const size = utf8Length(char)
    if (size > left) break
    left -= size
    end += char.length
  }
  return `${prefix}${line.text.slice(0, end)}${marker}`
}

/** A file request with its defaults filled in, as the continuation names it. */
function explicit({
  path,
  offset = 0,
  limit = READ_MAX_LINES,
}: FileRequest): Required<FileRequest> {
  return { path, offset, limit }
}

function continuationOf(outcomes: FileOutcome[]): Required<FileRequest>[] {
  const next: Required<FileRequest>[] = []
  for (const o of outcomes) {
    if (o.status === 'pending') next.push(explicit(o.request))
    else if (o.status === 'partial') {
      const offset = o.read.offset + o.returned
      const limit = o.read.appliedLimit - o.returned
      next.push({ path: o.request.path, offset, limit })
    }
  }
  return next
}

/** Marker used when the full continuation would take too much of the budget. */
function shortMarker(budget: number): string {
  return `... (max_output_bytes=${budget} reached; continue with files=metadata.batch.continuation)`
}

function fullMarker(budget: number, files: FileRequest[]): string {
  return `... (max_output_bytes=${budget} reached; continue with files=${JSON.stringify(files)})`
}

/**
 * Bytes to keep free while filling file `from`, so the continuation marker always fits: the full
 * marker (with the largest offset and limit it could name) when it is at most a quarter of the
 * budget, else the short one.
 */
function continuationReserve(
  budget: number,
  files: FileRequest[],
  from: number,
  read?: ReadWindow,
): number {
  const rest = files.slice(from).map(explicit)
  if (rest.length === 0) return 0
  if (read !== undefined) {
    rest[0] = {
      path: rest[0]!.path,
      offset: read.offset + read.appliedLimit,
      limit: read.appliedLimit,
    }
  }
  const full = utf8Length(fullMarker(budget, rest)) + 1
  return full <= budget / 4 ? full : utf8Length(shortMarker(budget)) + 1
}

/**
 * A budget that cannot show even the first file's header (and what a continuation needs) would
 * hand the same request back as its continuation forever: refuse it instead.
 */
function budgetTooSmall(budget: number, path: string): IsoagentError {
  return new IsoagentError(
    'invalid_argument',
    `max_output_bytes=${budget} is too small to show ${JSON.stringify(path)} and a continuation; raise it`,
    { data: { path, max_output_bytes: budget } },
  )
}
