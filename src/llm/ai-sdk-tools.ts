import type { Schema, Tool, ToolExecutionOptions } from 'ai'
import { IsoagentError } from '../errors.ts'
import { errorCodeOf } from '../kernel/error-kind.ts'
import type { JsonSchema } from '../kernel/tool-spec.ts'
import type { ToolResult } from '../tool-result.ts'
import type { ToolDefinitionLike } from './tool-specs.ts'

// Exported from `isoagent/ai-sdk` only: its declarations name `ai`'s types, so the root entry
// stays free of the optional peers.

/**
 * A session tool as an AI SDK tool (what `tool()` of `ai@6` returns): its `inputSchema` is what
 * `jsonSchema()` builds; `execute` runs the call on the session's governed (`agent`) path and
 * throws a failed result's output.
 */
export type AISDKTool = Tool<unknown, string> & {
  execute(input: unknown, options: ToolExecutionOptions): Promise<string>
}

/** What {@link toAISDKTools} needs of a session. */
export interface AISDKToolSource {
  toolDefinitions(): ToolDefinitionLike[]
  governedTool(name: string, args: unknown, options?: { signal?: AbortSignal }): Promise<ToolResult>
}

const SCHEMA_SYMBOL = Symbol.for('vercel.ai.schema')

// What `jsonSchema()` of ai@6 returns, built here so `ai` is never loaded at run time.
function aiJsonSchema(schema: JsonSchema): Schema<unknown> {
  return {
    [SCHEMA_SYMBOL]: true,
    _type: undefined,
    jsonSchema: schema,
    validate: undefined,
  } as unknown as Schema<unknown>
}

/**
 * The session's tools as AI SDK tools, for `generateText({ tools })` and friends. Each call goes
 * through the session's kernel with full model-side policy; a failed result is thrown as an
 * `IsoagentError` (its output as message), which the AI SDK hands the model as a tool error.
 */
export function toAISDKTools(session: AISDKToolSource): Record<string, AISDKTool> {
  const tools: Record<string, AISDKTool> = {}
  for (const def of session.toolDefinitions()) {
    tools[def.name] = {
      description: def.description,
      inputSchema: aiJsonSchema(def.parameters),
      async execute(input, { abortSignal }) {
        const result = await session.governedTool(
          def.name,
          input,
          abortSignal !== undefined ? { signal: abortSignal } : {},
        )
        if (result.exitCode === 0) return result.output
        throw new IsoagentError(errorCodeOf(result.errorKind), result.output, {
          data: { errorKind: result.errorKind },
        })
      },
    }
  }
  return tools
}
