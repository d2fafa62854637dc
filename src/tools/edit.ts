import { IsoagentError } from '../errors.ts'
import { utf8 } from '../text/bytes.ts'
import { openTextFile, restoreTextFile, toBodyConvention } from '../text/text-file.ts'
import { toolSuccess } from '../tool-result.ts'
import { boundedDiff } from './file-diff.ts'
import { fileSummary, loadText } from './file-state.ts'
import { MUTATING, type ToolSpec } from '../kernel/tool-spec.ts'

interface EditArgs {
  file_path: string
  old_string: string
  new_string: string
  replace_all?: boolean
  dry_run?: boolean
  max_replacements?: number
  expected_replacements?: number
}

function countOccurrences(haystack: string, needle: string): { count: number; firstAt: number } {
  let count = 0
  let firstAt = -1
  let at = haystack.indexOf(needle)
  while (at !== -1) {
    if (firstAt === -1) firstAt = at
    count++
    at = haystack.indexOf(needle, at + needle.length)
  }
  return { count, firstAt }
}

function lineOf(text: string, index: number): number {
  let line = 1
  for (let at = text.indexOf('\n'); at !== -1 && at < index; at = text.indexOf('\n', at + 1)) line++
  return line
}

export const editTool: ToolSpec<EditArgs> = {
  name: 'edit',
  pathArguments: ['file_path'],
  timeoutMs: 60_000,
  description:
    'Replace exact text in a UTF-8 file. `old_string` must match exactly once unless `replace_all` or ' +
    '`expected_replacements` says how many to replace. `dry_run` shows the diff without writing. A BOM and CRLF ' +
    'line endings are kept; old_string/new_string may use plain \\n.',
  parameters: {
    type: 'object',
    additionalProperties: false,
    required: ['file_path', 'old_string', 'new_string'],
    properties: {
      file_path: {
        type: 'string',
        minLength: 1,
        description: 'Path of the file (relative to the workspace root).',
      },
      old_string: { type: 'string', minLength: 1, description: 'Exact text to replace.' },
      new_string: {
        type: 'string',
        description: 'Replacement text (must differ from old_string).',
      },
      replace_all: { type: 'boolean', description: 'Replace every occurrence (default false).' },
      dry_run: {
        type: 'boolean',
        description: 'Compute the diff and counts, write nothing (default false).',
      },
      max_replacements: {
        type: 'integer',
        minimum: 1,
        description: 'Fail, writing nothing, if more would be replaced.',
      },
      expected_replacements: {
        type: 'integer',
        minimum: 1,
        description:
          'Exact number of occurrences to replace; any other count fails and writes nothing.',
      },
    },
  },
  available: (c) => c.read && c.write,
  scheduling: MUTATING,
  primaryArgument: 'file_path',
  async run(args, context) {
    if (args.old_string === args.new_string) {
      throw new IsoagentError(
        'invalid_argument',
        'old_string and new_string are identical; nothing to change',
      )
    }
    const path = context.path(args.file_path)
    const loaded = await loadText(context, path, args.file_path)
    const file = openTextFile(loaded.text)
    const oldString = toBodyConvention(file, args.old_string)
    const newString = toBodyConvention(file, args.new_string)
    const { count, firstAt } = countOccurrences(file.body, oldString)

    if (count === 0) {
      throw new IsoagentError(
        'invalid_argument',
        `old_string was not found in ${args.file_path}; read the file and copy the text exactly`,
        {
          data: { path: args.file_path, occurrences: 0 },
        },
      )
    }
    if (args.expected_replacements !== undefined && count !== args.expected_replacements) {
      throw new IsoagentError(
        'invalid_argument',
        `old_string occurs ${count} time${count === 1 ? '' : 's'} in ${args.file_path}, but expected_replacements is ${args.expected_replacements}; nothing was changed`,
        {
          data: { path: args.file_path, occurrences: count, expected: args.expected_replacements },
        },
      )
    }
    if (count > 1 && !args.replace_all && args.expected_replacements === undefined) {
      throw new IsoagentError(
        'invalid_argument',
        `old_string occurs ${count} times in ${args.file_path} (first at line ${lineOf(file.body, firstAt)}); add surrounding context to make it unique, or set replace_all or expected_replacements`,
        { data: { path: args.file_path, occurrences: count } },
      )
    }
    if (args.max_replacements !== undefined && count > args.max_replacements) {
      throw new IsoagentError(
        'invalid_argument',
        `old_string occurs ${count} times in ${args.file_path}, more than max_replacements ${args.max_replacements}; nothing was changed`,
        {
          data: {
            path: args.file_path,
            occurrences: count,
            max_replacements: args.max_replacements,
          },
        },
      )
    }

    const body = file.body.replaceAll(oldString, () => newString)
    const after = utf8(restoreTextFile(file, body))
    const dryRun = args.dry_run === true
    if (!dryRun) {
      await context.workspace.write(path, after, {
        precondition: { ifVersion: loaded.stat.version },
        signal: context.signal,
      })
    }
    const diff = boundedDiff(args.file_path, file.body, body)
    const firstLine = lineOf(file.body, firstAt)
    const summary = `${dryRun ? 'Dry run: would replace' : 'Replaced'} ${count} occurrence${count === 1 ? '' : 's'} in ${args.file_path} (first at line ${firstLine})`
    return toolSuccess('edit', `${summary}\n${diff.diff}`, {
      file_path: args.file_path,
      replacement_count: count,
      replacements: count,
      dry_run: dryRun,
      applied: !dryRun,
      first_line: firstLine,
      ...diff,
      before: await fileSummary(loaded.bytes),
      after: await fileSummary(after),
      line_ending: file.eol,
      bom: file.bom,
    })
  },
}
