import type { ModelRequest } from './language-model.ts'
import { toAnthropicTools } from './tool-specs.ts'

type Json = Record<string, unknown>
type Block = Json & { type: string }
type Turn = { role: 'user' | 'assistant'; content: Block[] }

function inputOf(args: string): unknown {
  try {
    const value = JSON.parse(args) as unknown
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value
  } catch {
    // an assistant turn with unparsable arguments is replayed with an empty input
  }
  return {}
}

/**
 * The system prompt and the alternating turns of `request`: tool results are user turns, and
 * consecutive blocks of one role share a turn.
 */
function conversation(request: ModelRequest): { system: string[]; messages: Turn[] } {
  const system: string[] = []
  const messages: Turn[] = []
  const push = (role: 'user' | 'assistant', blocks: Block[]) => {
    const last = messages[messages.length - 1]
    if (last !== undefined && last.role === role) last.content.push(...blocks)
    else messages.push({ role, content: blocks })
  }
  for (const m of request.messages) {
    switch (m.role) {
      case 'system':
        system.push(m.content)
        break
      case 'user':
        push('user', [{ type: 'text', text: m.content }])
        break
      case 'assistant': {
        const blocks: Block[] = m.content === '' ? [] : [{ type: 'text', text: m.content }]
        for (const c of m.toolCalls ?? [])
          blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: inputOf(c.arguments) })
        if (blocks.length > 0) push('assistant', blocks)
        break
      }
      case 'tool':
        push('user', [
          {
            type: 'tool_result',
            tool_use_id: m.toolCallId,
            content: m.content,
            ...(m.isError === true ? { is_error: true } : {}),
          },
        ])
        break
    }
  }
  return { system, messages }
}

/** The `tool_choice` field of a request's tool choice. */
function toolChoiceOf(choice: NonNullable<ModelRequest['toolChoice']>): Json {
  return choice === 'auto'
    ? { type: 'auto' }
    : choice === 'none'
      ? { type: 'none' }
      : choice === 'required'
        ? { type: 'any' }
        : { type: 'tool', name: choice.name }
}

/** The messages request body for `request`. */
export function anthropicRequestBody(
  model: string,
  request: ModelRequest,
  stream: boolean,
  maxTokens: number,
): Json {
  const { system, messages } = conversation(request)
  const body: Json = {
    model,
    max_tokens: request.maxOutputTokens ?? maxTokens,
    messages,
  }
  if (system.length > 0) body.system = system.join('\n\n')
  if (request.tools !== undefined && request.tools.length > 0)
    body.tools = toAnthropicTools(request.tools)
  const choice = request.toolChoice
  if (choice !== undefined && request.tools !== undefined && request.tools.length > 0)
    body.tool_choice = toolChoiceOf(choice)
  if (request.temperature !== undefined) body.temperature = request.temperature
  if (stream) body.stream = true
  return body
}
