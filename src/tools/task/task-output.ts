import { Validator } from '@cfworker/json-schema'
import { IsoagentError } from '../../errors.ts'
import type { JsonSchema } from '../../kernel/tool-spec.ts'
import type {
  LanguageModel,
  ModelMessage,
  ModelRequest,
  ModelUsage,
} from '../../llm/language-model.ts'

/** Largest `output_schema`, as JSON text. */
export const OUTPUT_SCHEMA_MAX_BYTES = 64 * 1024
/** Repair rounds after a first answer that is not valid JSON of the schema. */
export const OUTPUT_REPAIR_ATTEMPTS = 2

/** Compile an `output_schema` (throws `invalid_argument`). */
export function outputValidator(schema: unknown): Validator {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    throw new IsoagentError('invalid_argument', 'output_schema must be a JSON Schema object')
  const size = new TextEncoder().encode(JSON.stringify(schema)).length
  if (size > OUTPUT_SCHEMA_MAX_BYTES)
    throw new IsoagentError(
      'invalid_argument',
      `output_schema is over ${OUTPUT_SCHEMA_MAX_BYTES} bytes`,
    )
  try {
    return new Validator(schema as ConstructorParameters<typeof Validator>[0], '2020-12', false)
  } catch (cause) {
    throw new IsoagentError('invalid_argument', 'output_schema is not a valid JSON Schema', {
      cause,
    })
  }
}

function firstError(validator: Validator, value: unknown): string | undefined {
  const result = validator.validate(value)
  if (result.valid) return undefined
  const e = result.errors[result.errors.length - 1]
  return e ? `${e.instanceLocation.replace(/^#/, '') || 'value'}: ${e.error}` : 'invalid'
}

/**
 * The sub-agent's answer as an object of `schema`: one more model request over the conversation
 * (native JSON Schema when the model has it, else JSON object mode, else instructions), parsed and
 * validated, with up to {@link OUTPUT_REPAIR_ATTEMPTS} repair rounds fed the validation error.
 * Throws `invalid_argument` when no valid object came.
 */
export async function structuredAnswer(
  model: LanguageModel,
  conversation: ModelMessage[],
  schema: JsonSchema,
  signal: AbortSignal,
): Promise<{ object: unknown; usage: ModelUsage; repairRounds: number }> {
  const validator = outputValidator(schema)
  const usage: ModelUsage = { inputTokens: 0, outputTokens: 0 }
  const messages: ModelMessage[] = [
    ...conversation,
    {
      role: 'user',
      content:
        'Now give your final answer as one JSON value matching this JSON Schema, and nothing else:\n' +
        JSON.stringify(schema),
    },
  ]
  const format: ModelRequest['responseFormat'] = model.capabilities.jsonSchema
    ? { type: 'json_schema', name: 'task_output', schema, strict: false }
    : model.capabilities.jsonObject
      ? { type: 'json_object' }
      : undefined
  let problem = ''
  for (let round = 0; round <= OUTPUT_REPAIR_ATTEMPTS; round++) {
    const response = await model.generate(
      { messages, ...(format ? { responseFormat: format } : {}) },
      { signal },
    )
    usage.inputTokens += response.usage.inputTokens
    usage.outputTokens += response.usage.outputTokens
    const text = response.text.trim().replace(/^```(?:json)?\s*|\s*```$/g, '')
    let value: unknown
    try {
      value = JSON.parse(text)
      problem = firstError(validator, value) ?? ''
    } catch (error) {
      problem = `not valid JSON: ${(error as Error).message}`
    }
    if (problem === '') return { object: value, usage, repairRounds: round }
    messages.push(
      { role: 'assistant', content: response.text },
      {
        role: 'user',
        content: `That answer does not match the schema (${problem}). Answer again with only the JSON value.`,
      },
    )
  }
  throw new IsoagentError(
    'invalid_argument',
    `the sub-agent gave no object matching output_schema after ${OUTPUT_REPAIR_ATTEMPTS} repairs: ${problem}`,
  )
}
