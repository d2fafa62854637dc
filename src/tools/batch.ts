import { IsoagentError } from '../errors.ts'
import { toolFailure, toolSuccess, type ToolResult } from '../tool-result.ts'
import type { ToolSpec } from '../kernel/tool-spec.ts'

/** Most invocations in one batch, and the concurrency bounds. */
export const BATCH_LIMITS = {
  maxInvocations: 32,
  defaultConcurrency: 8,
  maxConcurrency: 16,
} as const

interface Invocation {
  id?: string
  tool: string
  args: Record<string, unknown>
}

interface BatchArgs {
  invocations: Invocation[]
  max_concurrency?: number
}

export const batchTool: ToolSpec<BatchArgs> = {
  name: 'batch',
  pathArguments: [],
  timeoutMs: 600_000,
  nesting: { container: true, nonReentrant: true },
  description:
    'Run up to 32 tool calls in one step. Calls run in parallel (up to max_concurrency) only when every one is ' +
    'read-only and idempotent; otherwise they run one after another in order. Each call passes the same checks ' +
    'as a direct call; one failure does not stop the others (see metadata.failed_indices). batch cannot contain batch.',
  parameters: {
    type: 'object',
    additionalProperties: false,
    required: ['invocations'],
    properties: {
      invocations: {
        type: 'array',
        minItems: 1,
        maxItems: BATCH_LIMITS.maxInvocations,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['tool', 'args'],
          properties: {
            id: {
              type: 'string',
              minLength: 1,
              maxLength: 128,
              description: 'Your label for this call (default its index).',
            },
            tool: { type: 'string', minLength: 1, description: 'Tool name.' },
            args: { type: 'object', description: 'Arguments of the tool.' },
          },
        },
      },
      max_concurrency: {
        type: 'integer',
        minimum: 1,
        maximum: BATCH_LIMITS.maxConcurrency,
        description: `Parallel calls when all are read-only (default ${BATCH_LIMITS.defaultConcurrency}).`,
      },
    },
  },
  available: () => true,
  scheduling: {
    read_only: false,
    idempotent: false,
    resumable: false,
    cancellation_safe: false,
    supports_pagination: false,
    max_parallelism: 4,
    output_kind: 'text',
  },
  async run(args, context) {
    const ids = args.invocations.map((inv, i) => inv.id ?? `#${i}`)
    const duplicate = ids.find((id, i) => ids.indexOf(id) !== i)
    if (duplicate !== undefined)
      throw new IsoagentError('invalid_argument', `duplicate invocation id "${duplicate}"`)
    const parallel = args.invocations.every((inv) => {
      const s = context.scheduling(inv.tool)
      return s !== undefined && s.read_only && s.idempotent
    })
    const concurrency = parallel ? (args.max_concurrency ?? BATCH_LIMITS.defaultConcurrency) : 1
    const results: ToolResult[] = new Array(args.invocations.length)
    let next = 0
    const worker = async () => {
      while (next < args.invocations.length) {
        const i = next++
        const inv = args.invocations[i]!
        results[i] = await context.invoke(inv.tool, inv.args)
      }
    }
    await Promise.all(
      Array.from({ length: Math.min(concurrency, args.invocations.length) }, worker),
    )

    const failedIndices = results.flatMap((r, i) => (r.exitCode === 0 ? [] : [i]))
    const output = results
      .map(
        (r, i) =>
          `=== [${i}] ${ids[i]} · ${args.invocations[i]!.tool} (exit ${r.exitCode}) ===\n${r.output}`,
      )
      .join('\n')
    const metadata = {
      status:
        failedIndices.length === 0
          ? 'complete'
          : failedIndices.length === results.length
            ? 'failed'
            : 'partial_failure',
      total: results.length,
      succeeded: results.length - failedIndices.length,
      failed: failedIndices.length,
      failed_indices: failedIndices,
      parallel,
      max_concurrency: concurrency,
      results: results.map((r, i) => ({
        index: i,
        id: ids[i],
        tool: args.invocations[i]!.tool,
        exitCode: r.exitCode,
        ...(r.errorKind ? { errorKind: r.errorKind } : {}),
        metadata: r.metadata ?? null,
      })),
    }
    if (failedIndices.length > 0) {
      return toolFailure(
        'batch',
        output,
        { type: 'partial_failure', failed: failedIndices.length, total: results.length },
        metadata,
      )
    }
    return toolSuccess('batch', output, metadata)
  },
}
