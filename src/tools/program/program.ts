import { IsoagentError } from '../../errors.ts'
import type { ToolContext, ToolSpec } from '../../kernel/tool-spec.ts'
import { toolFailure, toolSuccess, type ToolErrorKind, type ToolResult } from '../../tool-result.ts'
import { defaultQuickJsLoader, type QuickJsLoader } from './quickjs-loader.ts'
import { defaultProgramRunner, type ProgramRunner } from './program-runner.ts'
import { PROGRAM_MEMORY_BYTES } from './quickjs-pool.ts'
import { PROGRAM_STACK_BYTES, type ProgramLimits, type ProgramOutcome } from './run-program.ts'

/** Defaults and bounds of the `program` tool. */
export const PROGRAM_LIMITS = {
  timeoutMs: { default: 30_000, max: 600_000 },
  maxToolCalls: { default: 20, max: 10_000 },
  maxOutputBytes: { default: 65_536, max: 1_048_576 },
  sourceBytes: 262_144,
  allowedTools: 64,
} as const

/** Arguments of the `program` tool. */
export interface ProgramArgs {
  type?: 'script'
  language?: 'javascript'
  source?: string
  path?: string
  inputs?: unknown
  allowed_tools?: string[]
  limits?: Partial<ProgramLimits>
}

const DESCRIPTION =
  'Run a JavaScript program (QuickJS, no fs/network/process/env/timers) that calls tools through ctx and ' +
  'returns one JSON value: many tool calls in one step. Source is `export default async function run(ctx, inputs) ' +
  '{ ... }` (or a function body that returns a value). ctx.tool(name, args) → {output, exitCode, metadata}; ' +
  'ctx.readFile(path, {offset, limit}) → numbered lines; ctx.grep(query, {path, include, ...}) → text; ' +
  'ctx.glob(pattern) → paths; ctx.ls(path) → result; ctx.log(...) → metadata.logs. Helpers throw on a failed ' +
  'call; ctx.tool does not. Each call passes the same checks as a direct call; allowed_tools narrows what it may ' +
  'call; program cannot call program. Limits: 64 MiB memory, timeoutMs (default 30000, includes tool time), ' +
  'maxToolCalls (default 20), maxOutputBytes of the returned JSON (default 65536).'

const PARAMETERS = {
  type: 'object',
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['script'], description: 'Always "script".' },
    language: { type: 'string', enum: ['javascript'], description: 'Always "javascript".' },
    source: {
      type: 'string',
      minLength: 1,
      maxLength: PROGRAM_LIMITS.sourceBytes,
      description: 'The program. Give source or path, not both.',
    },
    path: {
      type: 'string',
      minLength: 1,
      pattern: '\\.m?js$',
      description: 'A .js or .mjs file of the workspace holding the program.',
    },
    inputs: { description: 'Any JSON value, passed to run(ctx, inputs) as a copy.' },
    allowed_tools: {
      type: 'array',
      maxItems: PROGRAM_LIMITS.allowedTools,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: 128 },
      description:
        'Only these tools may be called (default: every tool of the session but program).',
    },
    limits: {
      type: 'object',
      additionalProperties: false,
      properties: {
        timeoutMs: {
          type: 'integer',
          minimum: 1,
          maximum: PROGRAM_LIMITS.timeoutMs.max,
          description: `Wall time in ms, tool calls included (default ${PROGRAM_LIMITS.timeoutMs.default}).`,
        },
        maxToolCalls: {
          type: 'integer',
          minimum: 0,
          maximum: PROGRAM_LIMITS.maxToolCalls.max,
          description: `Most tool calls (default ${PROGRAM_LIMITS.maxToolCalls.default}).`,
        },
        maxOutputBytes: {
          type: 'integer',
          minimum: 1,
          maximum: PROGRAM_LIMITS.maxOutputBytes.max,
          description: `Largest returned value, in bytes of JSON (default ${PROGRAM_LIMITS.maxOutputBytes.default}).`,
        },
      },
    },
  },
}

function limitsOf(args: ProgramArgs): ProgramLimits {
  return {
    timeoutMs: args.limits?.timeoutMs ?? PROGRAM_LIMITS.timeoutMs.default,
    maxToolCalls: args.limits?.maxToolCalls ?? PROGRAM_LIMITS.maxToolCalls.default,
    maxOutputBytes: args.limits?.maxOutputBytes ?? PROGRAM_LIMITS.maxOutputBytes.default,
  }
}

async function loadSource(
  args: ProgramArgs,
  context: ToolContext,
): Promise<{ source: string; filename: string; isModule: boolean }> {
  if ((args.source === undefined) === (args.path === undefined))
    throw new IsoagentError('invalid_argument', 'give exactly one of source and path')
  if (args.source !== undefined)
    return { source: args.source, filename: 'program.js', isModule: looksLikeModule(args.source) }
  const path = context.path(args.path!)
  const stat = await context.workspace.stat(path)
  if (stat === undefined || stat.kind !== 'file')
    throw new IsoagentError('not_found', `no program file ${args.path}`, {
      data: { path: args.path },
    })
  if (stat.size > PROGRAM_LIMITS.sourceBytes) {
    throw new IsoagentError(
      'invalid_argument',
      `${args.path} is ${stat.size} bytes; a program is at most ${PROGRAM_LIMITS.sourceBytes}`,
    )
  }
  let source: string
  try {
    source = new TextDecoder('utf-8', { fatal: true }).decode(await context.workspace.read(path))
  } catch (cause) {
    if (IsoagentError.is(cause)) throw cause
    throw new IsoagentError('invalid_argument', `${args.path} is not UTF-8 text`, { cause })
  }
  const filename = args.path!.replace(/^\/+/, '')
  return { source, filename, isModule: /\.mjs$/.test(filename) || looksLikeModule(source) }
}

function looksLikeModule(source: string): boolean {
  return /(^|[\n;}])\s*(export\s|import\s*[{*'"]|import\s+[\w$])/.test(source)
}

function refusal(name: string, message: string): ToolResult {
  return toolFailure(name, message, { type: 'permission_denied', message })
}

function shape(outcome: ProgramOutcome, limits: ProgramLimits): ToolResult {
  const facts = {
    tool_calls: outcome.toolCalls,
    duration_ms: outcome.durationMs,
    logs: outcome.logs,
    ...(outcome.logsDropped > 0 ? { logs_dropped: outcome.logsDropped } : {}),
    limits: { ...limits, memoryBytes: PROGRAM_MEMORY_BYTES, stackBytes: PROGRAM_STACK_BYTES },
    memory_bytes: outcome.memoryBytes,
  }
  switch (outcome.status) {
    case 'ok': {
      const value: unknown = outcome.valueJson === undefined ? null : JSON.parse(outcome.valueJson)
      let output: string
      if (typeof value === 'string') output = value
      else if (outcome.valueJson === undefined) output = ''
      else {
        const pretty = JSON.stringify(value, null, 2)
        output = pretty.length <= limits.maxOutputBytes ? pretty : outcome.valueJson
      }
      return toolSuccess('program', output, { value, ...facts })
    }
    case 'error': {
      const where =
        outcome.line === undefined
          ? ''
          : ` (line ${outcome.line}${outcome.column === undefined ? '' : `, column ${outcome.column}`})`
      const message = `${outcome.errorName}: ${outcome.message}${where}`
      return toolFailure(
        'program',
        `program failed: ${message}`,
        { type: 'invalid_argument', message },
        {
          error: {
            name: outcome.errorName,
            message: outcome.message,
            ...(outcome.line !== undefined ? { line: outcome.line } : {}),
            ...(outcome.column !== undefined ? { column: outcome.column } : {}),
            stack: outcome.stack,
          },
          ...facts,
        },
      )
    }
    case 'limit': {
      const kind: ToolErrorKind =
        outcome.limit === 'timeout' || outcome.limit === 'cpu'
          ? { type: 'timeout', op: 'program', duration_ms: limits.timeoutMs }
          : { type: 'invalid_argument', message: outcome.message }
      return toolFailure(
        'program',
        `program stopped at its ${outcome.limit} limit: ${outcome.message}`,
        kind,
        { limit: outcome.limit, ...facts },
      )
    }
    case 'cancelled':
      return toolFailure(
        'program',
        'program was cancelled',
        { type: 'cancelled', op: 'program' },
        facts,
      )
  }
}

/**
 * The `program` tool over QuickJS from `loader` (default: {@link defaultQuickJsLoader}), run by
 * `runner` (default: the runtime's, {@link defaultProgramRunner}, read at each call).
 */
export function createProgramTool(
  loader?: QuickJsLoader,
  runner?: ProgramRunner,
): ToolSpec<ProgramArgs> {
  return {
    name: 'program',
    pathArguments: ['path'],
    nesting: { container: true, nonReentrant: true },
    description: DESCRIPTION,
    parameters: PARAMETERS,
    available: () => true,
    scheduling: {
      read_only: false,
      idempotent: false,
      resumable: false,
      cancellation_safe: false,
      supports_pagination: false,
      max_parallelism: 4,
      output_kind: 'json',
    },
    ownDeadlineMs: (args) => limitsOf(args).timeoutMs,
    async run(args, context) {
      const limits = limitsOf(args)
      if (args.allowed_tools?.includes('program'))
        throw new IsoagentError(
          'invalid_argument',
          'allowed_tools cannot name program: program cannot call program',
        )
      const program = await loadSource(args, context)
      const inputsJson = JSON.stringify(args.inputs ?? null)
      const allowed = args.allowed_tools === undefined ? undefined : new Set(args.allowed_tools)
      const using = loader ?? defaultQuickJsLoader()
      // Tool calls still pending when the program ends (a limit, an error) are cancelled.
      const ended = new AbortController()
      let outcome: ProgramOutcome
      try {
        outcome = await (runner ?? defaultProgramRunner()).run(using, program, inputsJson, limits, {
          signal: context.signal,
          callTool: async (name, toolArgs) => {
            if (name === 'program') return refusal(name, 'program cannot call program')
            if (allowed !== undefined && !allowed.has(name))
              return refusal(name, `${name} is not in this program's allowed_tools`)
            return context.invoke(name, toolArgs, { signal: ended.signal })
          },
        })
      } catch (cause) {
        throw new IsoagentError(
          'unsupported',
          `QuickJS could not be loaded in this runtime: ${cause instanceof Error ? cause.message : String(cause)}`,
          { cause },
        )
      } finally {
        ended.abort()
      }
      return shape(outcome, limits)
    },
  }
}

/** The `program` tool with the default loader. */
export const programTool = createProgramTool()
