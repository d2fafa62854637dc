import type { JsonSchema } from '../kernel/tool-spec.ts'

/** A tool as the model is told of it: `session.toolDefinitions()` items and `ModelTool`s. */
export interface ToolDefinitionLike {
  name: string
  description: string
  parameters: JsonSchema
}

/** An OpenAI chat-completions tool. */
export interface OpenAITool {
  type: 'function'
  function: { name: string; description: string; parameters: JsonSchema }
}

/** An Anthropic messages tool. */
export interface AnthropicTool {
  name: string
  description: string
  input_schema: JsonSchema
}

/** Tool definitions as OpenAI chat-completions `tools`. */
export function toOpenAITools(definitions: readonly ToolDefinitionLike[]): OpenAITool[] {
  return definitions.map((d) => ({
    type: 'function',
    function: { name: d.name, description: d.description, parameters: d.parameters },
  }))
}

/** Tool definitions as Anthropic messages `tools`. */
export function toAnthropicTools(definitions: readonly ToolDefinitionLike[]): AnthropicTool[] {
  return definitions.map((d) => ({
    name: d.name,
    description: d.description,
    input_schema: d.parameters,
  }))
}
