import { IsoagentError } from '../../errors.ts'
import { toolSuccess, type ToolResult } from '../../tool-result.ts'
import { WorkspacePath } from '../../workspace/workspace-path.ts'
import type { ToolContext } from '../../kernel/tool-spec.ts'
import { positionCursor, readCursor, skipsMetadata } from './paging.ts'
import { globPipeline, type GlobCounters } from './pipeline/glob-pipeline.ts'
import { continuedPipeline } from './pipeline/pipeline.ts'
import { SEARCH_LIMITS, type SearchArgs } from './search-args.ts'
import { compilePathGlob } from './walk/path-filter.ts'

/** `search` in glob mode: one page of the files that match `query`, in walk order. */
export async function runGlob(args: SearchArgs, context: ToolContext): Promise<ToolResult> {
  for (const key of ['context', 'case_sensitive', 'output_mode'] as const) {
    if (args[key] !== undefined)
      throw new IsoagentError('invalid_argument', `${key} does not apply to glob mode`)
  }
  const start = context.path(args.path ?? '.')
  // Both globs compile here first, so a bad one is refused before any walk.
  compilePathGlob(args.query, 'query', start)
  if (args.include !== undefined) compilePathGlob(args.include, 'include', start)
  const limit = args.limit ?? SEARCH_LIMITS.paged.default
  const position = readCursor(args)
  const backend = args.sort === 'backend'
  const continued = continuedPipeline<WorkspacePath, GlobCounters>(context, args.cursor)
  const pipeline =
    continued ??
    globPipeline({
      workspace: context.workspace,
      start,
      query: args.query,
      ...(args.include !== undefined ? { include: args.include } : {}),
      backendOrder: backend,
      ...(position && !backend ? { after: position.p as WorkspacePath } : {}),
      epoch: context.carryover.epoch,
    })
  pipeline.attach(context.signal)
  /** Matching files of earlier pages a fresh walk in backend order passes over. */
  let passOver = backend && continued === undefined ? (position?.n ?? 0) : 0
  const paths: string[] = []
  let more = false
  try {
    for (;;) {
      let path = pipeline.next()
      if (path instanceof Promise) path = await path
      if (path === undefined) break
      if (passOver > 0) {
        passOver--
        continue
      }
      if (paths.length === limit) {
        more = true
        pipeline.putBack(path)
        break
      }
      paths.push(path)
    }
  } catch (error) {
    await pipeline.close()
    throw error
  }
  const last = paths[paths.length - 1]
  const nextCursor =
    more && last !== undefined
      ? positionCursor(args, {
          p: last,
          i: 0,
          l: 0,
          s: 0,
          n: (position?.n ?? 0) + paths.length,
        })
      : null
  const { files_walked, ...skips } = pipeline.countsSince()
  pipeline.endPage(context, nextCursor)
  const lines = paths.length === 0 ? ['(no files)'] : [...paths]
  if (nextCursor !== null) lines.push(`... (more files; continue with cursor="${nextCursor}")`)
  return toolSuccess('search', lines.join('\n'), {
    mode: 'glob',
    query: args.query,
    path: WorkspacePath.display(start),
    returned: paths.length,
    paths,
    files_scanned: files_walked,
    files_skipped: skipsMetadata(skips, { binary: 0, lineTooLong: 0, vanished: 0 }),
    truncated: nextCursor !== null,
    next_cursor: nextCursor,
  })
}
