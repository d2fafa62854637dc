import { decodeCursor, encodeCursor } from '../paging/cursor.ts'
import { IsoagentError } from '../errors.ts'
import { toolSuccess } from '../tool-result.ts'
import { WorkspacePath } from '../workspace/workspace-path.ts'
import type { DirEntry } from '../workspace/workspace-services.ts'
import { READ_ONLY, type ToolSpec } from '../kernel/tool-spec.ts'

/** Default and largest page of `ls`, in entries. */
export const LS_LIMIT = { default: 200, max: 1000 } as const

interface LsArgs {
  path?: string
  limit?: number
  cursor?: string
}

function render(entry: DirEntry): string {
  if (entry.kind === 'directory') return `${entry.name}/`
  if (entry.kind === 'symlink') return `${entry.name}@`
  return entry.name
}

export const lsTool: ToolSpec<LsArgs> = {
  name: 'ls',
  pathArguments: ['path'],
  timeoutMs: 30_000,
  description:
    'List a directory: one entry per line, sorted by name, directories ending in "/" (symlinks in "@"). ' +
    'Paged: pass metadata.next_cursor as `cursor` for the next page.',
  parameters: {
    type: 'object',
    additionalProperties: false,
    properties: {
      path: {
        type: 'string',
        description: 'Directory (relative to the workspace root; default the root).',
      },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: LS_LIMIT.max,
        description: `Entries per page (default ${LS_LIMIT.default}, max ${LS_LIMIT.max}).`,
      },
      cursor: {
        type: 'string',
        minLength: 1,
        description: 'metadata.next_cursor of the previous page.',
      },
    },
  },
  available: (c) => c.read,
  scheduling: READ_ONLY,
  primaryArgument: 'path',
  async run(args, context) {
    const input = args.path ?? '.'
    const path = context.path(input)
    const display = WorkspacePath.display(path)
    let after: string | undefined
    if (args.cursor !== undefined) {
      const position = decodeCursor('ls', args.cursor)
      if (position.p !== path || typeof position.a !== 'string') {
        throw new IsoagentError(
          'invalid_argument',
          `invalid cursor: it belongs to a listing of another directory, not ${display}`,
        )
      }
      after = position.a
    }
    const stat = await context.workspace.stat(path)
    if (stat === undefined)
      throw new IsoagentError('not_found', `directory not found: ${input}`, {
        data: { path: input },
      })
    if (stat.kind !== 'directory') {
      throw new IsoagentError('not_directory', `${input} is a file, not a directory; use read`, {
        data: { path: input },
      })
    }
    const limit = args.limit ?? LS_LIMIT.default
    const page = await context.workspace.list(path, { after, limit, signal: context.signal })
    const lines = page.entries.map(render)
    const nextCursor =
      page.next === undefined ? null : encodeCursor('ls', { p: path, a: page.next })
    if (lines.length === 0)
      lines.push(after === undefined ? '(empty directory)' : '(no more entries)')
    if (nextCursor !== null) lines.push(`... (more entries; continue with cursor="${nextCursor}")`)
    return toolSuccess('ls', lines.join('\n'), {
      path: display,
      returned: page.entries.length,
      entries: page.entries.map((e) => (e.size === undefined ? { name: e.name, kind: e.kind } : e)),
      truncated: nextCursor !== null,
      next_cursor: nextCursor,
    })
  },
}
