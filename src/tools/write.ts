import { IsoagentError } from '../errors.ts'
import { bytesEqual, concatBytes, looksBinary, utf8 } from '../text/bytes.ts'
import { toolSuccess } from '../tool-result.ts'
import { fileSummary, statFile, MAX_EDIT_FILE_BYTES } from './file-state.ts'
import { MUTATING, type ToolSpec } from '../kernel/tool-spec.ts'

/** Largest `content` accepted by one write, in UTF-8 bytes. */
export const WRITE_MAX_BYTES = 64 * 1024 * 1024

interface WriteArgs {
  file_path: string
  content: string
  mode?: 'overwrite' | 'append'
  expected_offset?: number
}

export const writeTool: ToolSpec<WriteArgs> = {
  name: 'write',
  pathArguments: ['file_path'],
  timeoutMs: 60_000,
  description:
    'Write a UTF-8 text file. `overwrite` (default) replaces the whole file, creating it and its parent ' +
    'directories if needed. `append` adds to the end; with `expected_offset` (the file size in bytes you expect) ' +
    'it is compare-and-append, and re-sending a chunk that was already applied succeeds without appending twice.',
  parameters: {
    type: 'object',
    additionalProperties: false,
    required: ['file_path', 'content'],
    properties: {
      file_path: {
        type: 'string',
        minLength: 1,
        description: 'Path of the file (relative to the workspace root).',
      },
      content: {
        type: 'string',
        description: 'Full file content (overwrite) or the bytes to add (append).',
      },
      mode: { type: 'string', enum: ['overwrite', 'append'], description: 'Default overwrite.' },
      expected_offset: {
        type: 'integer',
        minimum: 0,
        description:
          'append only: the current file size in UTF-8 bytes; the append fails if it differs.',
      },
    },
  },
  available: (c) => c.write,
  scheduling: MUTATING,
  primaryArgument: 'file_path',
  async run(args, context) {
    const mode = args.mode ?? 'overwrite'
    if (mode === 'overwrite' && args.expected_offset !== undefined) {
      throw new IsoagentError('invalid_argument', 'expected_offset applies to mode "append" only')
    }
    const data = utf8(args.content)
    if (data.length > WRITE_MAX_BYTES) {
      throw new IsoagentError(
        'too_large',
        `content is ${data.length} bytes; one write takes at most ${WRITE_MAX_BYTES}`,
      )
    }
    const path = context.path(args.file_path)
    if (path === '')
      throw new IsoagentError('is_directory', 'the workspace root is a directory, not a file')
    const stat = await statFile(context, path, args.file_path)
    const before = stat === undefined ? undefined : await context.workspace.read(path)

    let next = data
    let applied = true
    if (mode === 'append' && before !== undefined) {
      if (before.length + data.length > MAX_EDIT_FILE_BYTES) {
        throw new IsoagentError(
          'too_large',
          `appending would make ${args.file_path} larger than ${MAX_EDIT_FILE_BYTES} bytes`,
        )
      }
      if (looksBinary(before)) {
        throw new IsoagentError(
          'binary_file',
          `${args.file_path} is a binary file; append refuses it`,
          {
            data: { path: args.file_path },
          },
        )
      }
      const expected = args.expected_offset
      if (expected !== undefined && expected !== before.length) {
        const resent =
          before.length === expected + data.length &&
          bytesEqual(before.subarray(expected), data) &&
          data.length > 0
        if (!resent) {
          throw new IsoagentError(
            'version_conflict',
            `append to ${args.file_path} expected it to be ${expected} bytes, but it is ${before.length}; read it again and resend with expected_offset=${before.length}`,
            { data: { path: args.file_path, expected, actual: before.length } },
          )
        }
        applied = false
      }
      next = applied ? concatBytes([before, data]) : before
    } else if (
      mode === 'append' &&
      args.expected_offset !== undefined &&
      args.expected_offset !== 0
    ) {
      throw new IsoagentError(
        'version_conflict',
        `append to ${args.file_path} expected it to be ${args.expected_offset} bytes, but it does not exist`,
        { data: { path: args.file_path, expected: args.expected_offset, actual: null } },
      )
    }

    if (applied) {
      await context.workspace.write(path, next, {
        precondition: stat === undefined ? { ifAbsent: true } : { ifVersion: stat.version },
        signal: context.signal,
      })
    }
    const created = stat === undefined
    const verb = !applied
      ? 'Already applied'
      : created
        ? 'Created'
        : mode === 'append'
          ? 'Appended to'
          : 'Wrote'
    const output = applied
      ? `${verb} ${args.file_path} (${data.length} bytes ${mode === 'append' ? 'appended' : 'written'}; ${next.length} bytes in all)`
      : `${verb}: ${args.file_path} already ends with this content at offset ${args.expected_offset}; nothing appended (${next.length} bytes in all)`
    return toolSuccess('write', output, {
      file_path: args.file_path,
      mode,
      created,
      applied,
      bytes_written: applied ? data.length : 0,
      next_offset: next.length,
      before: before === undefined ? null : await fileSummary(before),
      after: await fileSummary(next),
    })
  },
}
