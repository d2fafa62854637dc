import { IsoagentError } from '../../errors.ts'
import { errorCodeOf } from '../../kernel/error-kind.ts'
import type { JsonSchema, ToolContext } from '../../kernel/tool-spec.ts'
import type { ModelUsage } from '../../llm/language-model.ts'
import { GENERATE_OBJECT } from '../generate-object/generate-object.ts'
import { checkObjectSchema } from '../generate-object/object-schema.ts'

/** Check an `output_schema` as generate_object checks its `schema` (throws `invalid_argument`). */
export function checkOutputSchema(schema: unknown): void {
  checkObjectSchema(schema)
}

/**
 * The sub-agent's answer as an object of `schema`: a governed `generate_object` call (its modes,
 * validation, repair rounds and deadline) over the task and the sub-agent's final answer. Throws
 * an `IsoagentError` coded by generate_object's failure when no valid object came.
 */
export async function structuredAnswer(
  context: ToolContext,
  task: { description: string; prompt: string },
  answer: string,
  schema: JsonSchema,
  signal: AbortSignal,
): Promise<{ object: unknown; usage: ModelUsage; repairRounds: number }> {
  const result = await context.invoke(
    GENERATE_OBJECT,
    {
      schema,
      schema_name: 'task_output',
      system:
        "Turn a sub-agent's report into the requested JSON object. Use only what the report says.",
      prompt: `Task: ${task.description}\n\n${task.prompt}\n\nThe sub-agent's report:\n${answer}`,
    },
    { signal },
  )
  if (result.exitCode !== 0)
    throw new IsoagentError(
      errorCodeOf(result.errorKind),
      `no object matching output_schema: ${result.output}`,
    )
  const meta = result.metadata as {
    object: unknown
    repair_rounds?: number
    usage?: Partial<ModelUsage>
  }
  return {
    object: meta.object,
    repairRounds: meta.repair_rounds ?? 0,
    usage: {
      inputTokens: meta.usage?.inputTokens ?? 0,
      outputTokens: meta.usage?.outputTokens ?? 0,
    },
  }
}
