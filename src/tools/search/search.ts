import { IsoagentError } from '../../errors.ts'
import { validateToolArgs } from '../../kernel/validate.ts'
import type { WorkspaceRetrieval } from '../../retrieval/workspace-retrieval.ts'
import { runHybrid } from './hybrid-mode.ts'
import { runSemantic } from './semantic-mode.ts'
import { READ_ONLY, type ToolSpec } from '../../kernel/tool-spec.ts'
import { runBm25 } from './bm25/bm25-mode.ts'
import { runGlob } from './glob-mode.ts'
import { runGrep } from './grep-mode.ts'
import { SEARCH_LIMITS, type SearchArgs } from './search-args.ts'

// The search tool: its arguments, and which mode runs them. grep and glob are paged walks
// (grep-mode.ts, glob-mode.ts over pipeline/, walk/ and scan/); bm25 ranks (bm25/).

/** The `search` tool: grep, glob and bm25 over the workspace port. */
export const searchTool: ToolSpec<SearchArgs> = {
  name: 'search',
  pathArguments: ['path'],
  description:
    'Search the workspace. mode "grep": JavaScript regular expression (Unicode) over file lines, output_mode ' +
    'content (path:line:text) | files_with_matches | count (path:N) | summary. mode "glob": list files matching a ' +
    'glob (brace sets, extglobs, **; a pattern without / matches file names at any depth). mode "bm25": ranked ' +
    'text search, top chunks with line ranges. Walks like ripgrep: .gitignore/.ignore respected, hidden files and ' +
    'binary files skipped. Paged: pass metadata.next_cursor as cursor.',
  parameters: {
    type: 'object',
    additionalProperties: false,
    required: ['mode', 'query'],
    properties: {
      mode: { type: 'string', enum: ['grep', 'glob', 'bm25'] },
      query: {
        type: 'string',
        minLength: 1,
        maxLength: 4096,
        description: 'Regex (grep), glob (glob) or words (bm25).',
      },
      path: {
        type: 'string',
        description: 'Directory or file to search (default the workspace root).',
      },
      include: {
        type: 'string',
        minLength: 1,
        description:
          'Only files matching this glob (e.g. "*.ts", "src/**/*.{js,ts}", "!*.min.js").',
      },
      context: {
        type: 'integer',
        minimum: 0,
        maximum: SEARCH_LIMITS.maxContext,
        description: 'Lines of context around grep matches (default 0) or bm25 hits (default 2).',
      },
      case_sensitive: { type: 'boolean', description: 'grep: match case exactly (default true).' },
      output_mode: {
        type: 'string',
        enum: ['content', 'files_with_matches', 'count', 'summary'],
        description: 'grep output (default content).',
      },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: SEARCH_LIMITS.paged.max,
        description:
          'Page size: matching lines, files or paths (default 200, max 1000); bm25 hits (default 10, max 25).',
      },
      cursor: {
        type: 'string',
        minLength: 1,
        description: 'metadata.next_cursor of the previous page.',
      },
      sort: {
        type: 'string',
        enum: ['path', 'backend'],
        description: 'path (default, stable paging) or the backend listing order.',
      },
    },
  },
  available: (c) => c.read && c.search,
  scheduling: { ...READ_ONLY, max_parallelism: 4 },
  primaryArgument: 'path',
  validate(args) {
    const mode = (args as { mode?: unknown } | null)?.mode
    if (mode === 'semantic' || mode === 'hybrid')
      return `mode='${mode}' is unavailable because this session did not enable semantic retrieval`
    return validateToolArgs('search', args)
  },
  async run(args, context) {
    if (args.mode === 'semantic' || args.mode === 'hybrid')
      throw new IsoagentError(
        'unsupported',
        `mode='${args.mode}' is unavailable because this session did not enable semantic retrieval`,
      )
    if (args.mode === 'bm25') {
      if (args.cursor !== undefined)
        throw new IsoagentError(
          'invalid_argument',
          'bm25 results are ranked, not paged: cursor does not apply',
        )
      if ((args.limit ?? 0) > SEARCH_LIMITS.ranked.max)
        throw new IsoagentError(
          'invalid_argument',
          `bm25 limit is at most ${SEARCH_LIMITS.ranked.max}`,
        )
      return runBm25(args, context)
    }
    if (args.mode === 'glob') return runGlob(args, context)
    return runGrep(args, context)
  },
}

const RETRIEVAL_DESCRIPTION =
  ' mode "semantic": meaning-based ranking (exact cosine over the session\'s embedded 80-line chunks; ' +
  'query up to 2048 bytes, limit 1..25, default 10). mode "hybrid": exact, lexical (bm25), symbol and semantic ' +
  'evidence fused by reciprocal rank (k=60); exact identifier hits first, at most 2 chunks per file. Every ' +
  'semantic/hybrid hit is re-checked against the current file.'

/**
 * The `search` tool of a session that enabled retrieval: the same tool with `semantic` and
 * `hybrid` in its schema, answered from `retrieval`'s index.
 */
export function createSearchTool(retrieval: WorkspaceRetrieval): ToolSpec<SearchArgs> {
  const properties = searchTool.parameters.properties as Record<string, Record<string, unknown>>
  return {
    ...searchTool,
    description: searchTool.description + RETRIEVAL_DESCRIPTION,
    parameters: {
      ...searchTool.parameters,
      properties: {
        ...properties,
        mode: { type: 'string', enum: ['grep', 'glob', 'bm25', 'semantic', 'hybrid'] },
      },
    },
    validate(args) {
      const mode = (args as { mode?: unknown } | null)?.mode
      if (mode !== 'semantic' && mode !== 'hybrid') return validateToolArgs('search', args)
      return validateToolArgs('search', { ...(args as object), mode: 'bm25' })
    },
    async run(args, context) {
      if (args.mode === 'semantic') return runSemantic(args, context, retrieval)
      if (args.mode === 'hybrid') return runHybrid(args, context, retrieval)
      return searchTool.run(args, context)
    },
    async close() {
      retrieval.close()
      await searchTool.close?.()
    },
  }
}
