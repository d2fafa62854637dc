import { applyPatch, parsePatch, type StructuredPatch, type StructuredPatchHunk } from 'diff'
import { IsoagentError } from '../errors.ts'
import { utf8 } from '../text/bytes.ts'
import { openTextFile, restoreTextFile, type TextFile } from '../text/text-file.ts'
import { toolSuccess } from '../tool-result.ts'
import { fileSummary, loadText, statFile } from './file-state.ts'
import { MUTATING, type ToolSpec } from '../kernel/tool-spec.ts'

/** Largest accepted diff, in UTF-8 bytes. */
export const PATCH_MAX_BYTES = 8 * 1024 * 1024

interface PatchArgs {
  file_path: string
  diff: string
}

function invalid(message: string, data: Record<string, unknown> = {}): IsoagentError {
  return new IsoagentError('invalid_argument', message, { data })
}

function hunkHeader(h: StructuredPatchHunk): string {
  const oldStart = h.oldLines === 0 ? h.oldStart - 1 : h.oldStart
  const newStart = h.newLines === 0 ? h.newStart - 1 : h.newStart
  return `@@ -${oldStart},${h.oldLines} +${newStart},${h.newLines} @@`
}

/** Parse exactly one file's hunks; the library verifies each hunk's line counts. */
function parseOne(diff: string): StructuredPatch {
  let parsed: StructuredPatch[]
  try {
    parsed = parsePatch(diff)
  } catch (cause) {
    throw new IsoagentError(
      'invalid_argument',
      `malformed unified diff: ${(cause as Error).message}`,
      { cause },
    )
  }
  const withHunks = parsed.filter((p) => p.hunks.length > 0)
  if (withHunks.length === 0)
    throw invalid('the diff has no hunks (expected lines starting with "@@ -a,b +c,d @@")')
  if (withHunks.length > 1)
    throw invalid('the diff touches more than one file; patch applies to file_path only')
  return withHunks[0]!
}

/** Hunk body lines must all end in LF or all in CRLF. */
function checkDiffLineEndings(patch: StructuredPatch): 'lf' | 'crlf' {
  let crlf = 0
  let lf = 0
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith('\\')) continue
      if (line.endsWith('\r')) crlf++
      else lf++
    }
  }
  if (crlf > 0 && lf > 0)
    throw invalid(
      'the diff mixes LF and CRLF line endings in its hunks; send it with one line ending',
    )
  return crlf > 0 ? 'crlf' : 'lf'
}

function stripCr(patch: StructuredPatch): StructuredPatch {
  return {
    ...patch,
    hunks: patch.hunks.map((h) => ({
      ...h,
      lines: h.lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)),
    })),
  }
}

/** Why a hunk does not apply: the first line of its old side that differs from the file. */
function diagnose(patch: StructuredPatch, body: string): string {
  const fileLines = body.split('\n')
  let delta = 0
  for (let i = 0; i < patch.hunks.length; i++) {
    const hunk = patch.hunks[i]!
    const old = hunk.lines.filter((l) => l[0] === ' ' || l[0] === '-').map((l) => l.slice(1))
    const start = hunk.oldStart - 1 + delta
    const matchesAt = (at: number) => old.every((line, k) => fileLines[at + k] === line)
    if (!matchesAt(start)) {
      let found = -1
      for (let at = 0; at + old.length <= fileLines.length && found === -1; at++)
        if (matchesAt(at)) found = at
      if (found === -1) {
        const k = old.findIndex((line, j) => fileLines[start + j] !== line)
        const actual = fileLines[start + k]
        return (
          `hunk ${i + 1} (${hunkHeader(hunk)}) does not match ${patch.oldFileName ?? 'the file'}: ` +
          `at line ${start + k + 1} the diff expects ${JSON.stringify(old[k])} but the file has ` +
          `${actual === undefined ? 'no line (end of file)' : JSON.stringify(actual)}`
        )
      }
      delta += found - start
    }
    delta += hunk.newLines - hunk.oldLines
  }
  return 'the hunks do not apply in order (a later hunk matches only before an earlier one)'
}

export const patchTool: ToolSpec<PatchArgs> = {
  name: 'patch',
  pathArguments: ['file_path'],
  timeoutMs: 60_000,
  description:
    'Apply a strict unified diff (`@@ -a,b +c,d @@` hunks with exact context) to one file, all or nothing. ' +
    'Hunk line counts are checked; context must match exactly (hunks may sit at a shifted line). ' +
    'A file whose hunks all start at -0,0 is created.',
  parameters: {
    type: 'object',
    additionalProperties: false,
    required: ['file_path', 'diff'],
    properties: {
      file_path: {
        type: 'string',
        minLength: 1,
        description: 'Path of the file to patch (relative to the workspace root).',
      },
      diff: {
        type: 'string',
        minLength: 1,
        description: 'Unified diff for this file; ---/+++ headers optional.',
      },
    },
  },
  available: (c) => c.read && c.write,
  scheduling: MUTATING,
  primaryArgument: 'file_path',
  async run(args, context) {
    if (utf8(args.diff).length > PATCH_MAX_BYTES)
      throw invalid(`the diff is larger than ${PATCH_MAX_BYTES} bytes`)
    const parsedRaw = parseOne(args.diff)
    const diffEol = checkDiffLineEndings(parsedRaw)
    const path = context.path(args.file_path)
    const stat = await statFile(context, path, args.file_path)

    let file: TextFile
    let beforeBytes: Uint8Array
    let version: string | undefined
    if (stat === undefined) {
      if (!parsedRaw.hunks.every((h) => h.oldLines === 0)) {
        throw new IsoagentError(
          'not_found',
          `file not found: ${args.file_path} (a diff that creates a file has only -0,0 hunks)`,
          {
            data: { path: args.file_path },
          },
        )
      }
      file = { bom: false, eol: diffEol === 'crlf' ? 'crlf' : 'lf', body: '' }
      beforeBytes = new Uint8Array()
    } else {
      const loaded = await loadText(context, path, args.file_path)
      file = openTextFile(loaded.text)
      beforeBytes = loaded.bytes
      version = loaded.stat.version
      if (file.eol === 'mixed') {
        throw new IsoagentError(
          'invalid_argument',
          `${args.file_path} mixes LF and CRLF line endings; patch refuses to guess which to write (use edit)`,
          { data: { path: args.file_path } },
        )
      }
    }
    const patch = file.eol === 'crlf' ? stripCr(parsedRaw) : parsedRaw

    const body = applyPatch(file.body, patch, { fuzzFactor: 0, autoConvertLineEndings: false })
    if (body === false) {
      throw new IsoagentError(
        'invalid_argument',
        `patch does not apply; nothing was changed: ${diagnose(patch, file.body)}`,
        {
          data: { path: args.file_path },
        },
      )
    }
    const after = utf8(restoreTextFile(file, body))
    await context.workspace.write(path, after, {
      precondition: version === undefined ? { ifAbsent: true } : { ifVersion: version },
      signal: context.signal,
    })
    let added = 0
    let removed = 0
    for (const h of patch.hunks) {
      for (const l of h.lines) {
        if (l[0] === '+') added++
        else if (l[0] === '-') removed++
      }
    }
    return toolSuccess(
      'patch',
      `${stat === undefined ? 'Created' : 'Patched'} ${args.file_path}: ${patch.hunks.length} hunk${patch.hunks.length === 1 ? '' : 's'}, +${added} -${removed}`,
      {
        file_path: args.file_path,
        created: stat === undefined,
        hunks: patch.hunks.length,
        lines_added: added,
        lines_removed: removed,
        before: await fileSummary(beforeBytes),
        after: await fileSummary(after),
        line_ending: file.eol,
        bom: file.bom,
      },
    )
  },
}
