import type { ModelCapabilities, ModelMessage, ModelRequest } from '../../llm/language-model.ts'
import type { ObjectSchema } from './object-schema.ts'

/** How generate_object asks the model for the object. */
export type ObjectMode = 'tool' | 'strict' | 'json' | 'prompt'

/** What a caller may ask for: a mode, or `auto` to pick from the model's capabilities. */
export type RequestedMode = ObjectMode | 'auto'

/** Whether a model with `capabilities` can serve `mode`. */
export function supports(capabilities: ModelCapabilities, mode: ObjectMode): boolean {
  switch (mode) {
    case 'tool':
      return capabilities.tools && capabilities.toolChoice
    case 'strict':
      return capabilities.jsonSchema
    case 'json':
      return capabilities.jsonObject
    case 'prompt':
      return true
  }
}

/** `auto`: native JSON Schema, else a forced tool call, else JSON object mode, else instructions. */
export function resolveMode(requested: RequestedMode, capabilities: ModelCapabilities): ObjectMode {
  if (requested !== 'auto') return requested
  for (const mode of ['strict', 'tool', 'json'] as const)
    if (supports(capabilities, mode)) return mode
  return 'prompt'
}

/** What the request is built from. */
export interface ObjectTask {
  prompt: string
  system?: string
  name: string
  description?: string
  schema: ObjectSchema
}

function instructions(mode: ObjectMode, task: ObjectTask): string {
  const about = task.description !== undefined ? ` (${task.description})` : ''
  if (mode === 'tool')
    return `Answer only by calling the tool "${task.name}" once; its arguments are the ${task.name} object${about}.`
  if (mode === 'strict') return `Answer with the ${task.name} object${about} as JSON only.`
  const wrappedNote =
    mode === 'json' && task.schema.wrapped
      ? ' Put the value in the "value" field of an object.'
      : ''
  return [
    `Answer with one JSON value, the ${task.name}${about}, that matches this JSON Schema, and nothing else: no prose, no code fences.${wrappedNote}`,
    JSON.stringify(mode === 'json' ? task.schema.objectRooted : task.schema.schema),
  ].join('\n')
}

/** Whether `mode` asks for the object-rooted form (`{ value }` around a non-object root). */
export function objectRootedIn(mode: ObjectMode): boolean {
  return mode !== 'prompt'
}

/** The first request of a generation in `mode`. */
export function firstRequest(mode: ObjectMode, task: ObjectTask): ModelRequest {
  const system = [task.system, instructions(mode, task)].filter((s) => s !== undefined).join('\n\n')
  const messages: ModelMessage[] = [
    { role: 'system', content: system },
    { role: 'user', content: task.prompt },
  ]
  const request: ModelRequest = { messages }
  if (mode === 'tool') {
    request.tools = [
      {
        name: task.name,
        description: task.description ?? `Return the ${task.name} object.`,
        parameters: task.schema.objectRooted,
      },
    ]
    request.toolChoice = { name: task.name }
  } else if (mode === 'strict') {
    request.responseFormat = {
      type: 'json_schema',
      name: task.name,
      ...(task.description !== undefined ? { description: task.description } : {}),
      schema: task.schema.objectRooted,
      strict: true,
    }
  } else if (mode === 'json') {
    request.responseFormat = { type: 'json_object' }
  }
  return request
}
