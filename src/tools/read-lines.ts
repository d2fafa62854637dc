import { IsoagentError } from '../errors.ts'
import {
  collectLineWindow,
  lineWindowOf,
  type LineWindow,
  type WindowLine,
} from '../text/line-window.ts'
import type { WorkspacePath } from '../workspace/workspace-path.ts'
import type { ToolContext } from '../kernel/tool-spec.ts'
import { uriSchemeOf, type ReadOnlyMount } from '../kernel/read-only-mount.ts'

/** Default and largest `limit` of a read, in lines. */
export const READ_MAX_LINES = 2000
/** Lines longer than this many characters are cut for display. */
export const READ_MAX_LINE_CHARS = 2000
/**
 * After the requested lines, a read counts the file's remaining lines for at most this many more
 * bytes; past that it stops reading (an S3 object or a 1 GB log is not fetched whole for one page)
 * and `total_lines` is `null`.
 */
export const READ_COUNT_BEYOND_BYTES = 8 * 1024 * 1024

/** A window of a text file read for the `read` tool. */
export interface ReadWindow {
  path: WorkspacePath
  offset: number
  requestedLimit: number
  appliedLimit: number
  window: LineWindow
  /** Size of the file in bytes (from stat: the window may not have read it all). */
  fileBytes: number
}

/**
 * Read lines `[offset, offset + limit)` of a workspace text file by streaming it, or of a file of
 * one of the session's read-only mounts (`skill://<name>/<file>`: a skill's bundled file). Refuses
 * directories, binary files, invalid UTF-8 in the window and offsets past the end.
 */
export async function readWindow(
  context: ToolContext,
  input: string,
  offset: number,
  limit: number | undefined,
): Promise<ReadWindow> {
  const scheme = uriSchemeOf(input)
  const mount = scheme === undefined ? undefined : context.mounts.get(scheme)
  if (mount !== undefined) return readMountedWindow(mount, context, input, offset, limit)
  if (scheme === 'skill://')
    throw new IsoagentError('not_found', `file not found: ${input} (this session has no skills)`, {
      data: { path: input },
    })
  const path = context.path(input)
  const stat = await context.workspace.stat(path)
  if (stat === undefined) {
    throw new IsoagentError('not_found', `file not found: ${input}`, { data: { path: input } })
  }
  if (stat.kind === 'directory') {
    throw new IsoagentError('is_directory', `${input} is a directory; use ls to list it`, {
      data: { path: input },
    })
  }
  const requestedLimit = limit ?? READ_MAX_LINES
  const appliedLimit = Math.min(requestedLimit, READ_MAX_LINES)
  const options = {
    offset,
    limit: appliedLimit,
    maxLineChars: READ_MAX_LINE_CHARS,
    path: input,
    countBeyondBytes: READ_COUNT_BEYOND_BYTES,
  }
  // A file the workspace reads at once (small, on local disk or in memory) needs no stream. Up to
  // READ_COUNT_BEYOND_BYTES the window does not depend on how the bytes are chunked.
  const now =
    stat.kind === 'file' && stat.size <= READ_COUNT_BEYOND_BYTES
      ? context.workspace.readNow?.(path)
      : undefined
  const window =
    now !== undefined && now.length <= READ_COUNT_BEYOND_BYTES
      ? lineWindowOf(now, options, context.signal)
      : await collectLineWindow(await context.workspace.readStream(path), options, context.signal)
  checkOffset(window, offset, input)
  return { path, offset, requestedLimit, appliedLimit, window, fileBytes: stat.size }
}

function checkOffset(window: LineWindow, offset: number, input: string): void {
  if (offset > 0 && offset >= window.totalLines) {
    throw new IsoagentError(
      'invalid_argument',
      `offset ${offset} is past the end of ${input} (${window.totalLines} line${window.totalLines === 1 ? '' : 's'}; offsets are 0-based)`,
      { data: { path: input, offset, total_lines: window.totalLines } },
    )
  }
}

/** {@link readWindow} of a mounted file: its bytes (capped by the mount) come whole. */
async function readMountedWindow(
  mount: ReadOnlyMount,
  context: ToolContext,
  input: string,
  offset: number,
  limit: number | undefined,
): Promise<ReadWindow> {
  const bytes = await mount.read(input)
  const requestedLimit = limit ?? READ_MAX_LINES
  const appliedLimit = Math.min(requestedLimit, READ_MAX_LINES)
  const window = lineWindowOf(
    bytes,
    {
      offset,
      limit: appliedLimit,
      maxLineChars: READ_MAX_LINE_CHARS,
      path: input,
      countBeyondBytes: READ_COUNT_BEYOND_BYTES,
    },
    context.signal,
  )
  checkOffset(window, offset, input)
  const path = input as WorkspacePath
  return { path, offset, requestedLimit, appliedLimit, window, fileBytes: bytes.length }
}

/** `%6d\t<line>` with a 1-based number, and a marker on cut lines. */
export function renderLine(lineNumber: number, line: WindowLine): string {
  const text = line.cut
    ? `${line.text} … (line truncated at ${READ_MAX_LINE_CHARS} characters)`
    : line.text
  return `${String(lineNumber).padStart(6)}\t${text}`
}

/** The continuation marker line after a window with more lines. */
export function moreLinesMarker(nextOffset: number): string {
  return `... (more lines available; continue with offset=${nextOffset})`
}

/** Whether lines follow line `end` (0-based, exclusive) of the window's file. */
export function hasMoreLines(read: ReadWindow, end: number): boolean {
  return !read.window.complete || end < read.window.totalLines
}

/** Range metadata of a window of which `returned` lines were rendered. */
export function rangeMetadata(read: ReadWindow, returned: number, outputBytes: number) {
  const end = read.offset + returned
  const eof = read.window.complete && end >= read.window.totalLines
  return {
    offset: read.offset,
    requested_limit: read.requestedLimit,
    applied_limit: read.appliedLimit,
    returned_lines: returned,
    next_offset: eof ? null : end,
    eof,
    total_lines: read.window.complete ? read.window.totalLines : null,
    limit_clamped: read.appliedLimit < read.requestedLimit,
    output_bytes: outputBytes,
  }
}

/** A source anchor: the 1-based inclusive line range a result shows of a file. */
export function sourceAnchor(path: string, offset: number, returned: number) {
  return { path, start_line: offset + 1, end_line: offset + returned }
}
