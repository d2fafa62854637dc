import type { IsoagentError } from '../errors.ts'
import type { ModelFinishReason, ModelResponse } from './language-model.ts'
import { statusError, type RequestScope } from './provider-http.ts'

/** A JSON object of the messages API. */
export type Json = Record<string, unknown>
/** A content block of the messages API. */
export type Block = Json & { type: string }

const FINISH: Record<string, ModelFinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  refusal: 'content_filter',
}

/** The finish reason of a `stop_reason`. */
export function finishOf(value: unknown): ModelFinishReason {
  return (typeof value === 'string' ? FINISH[value] : undefined) ?? 'other'
}

/** The failure an `error` object of the API reports, with the HTTP status its type stands for. */
export function eventError(scope: RequestScope, error: unknown): IsoagentError {
  const e = (error ?? {}) as { type?: unknown; message?: unknown }
  const message = typeof e.message === 'string' ? e.message : 'the provider reported an error'
  const status =
    e.type === 'rate_limit_error'
      ? 429
      : e.type === 'invalid_request_error'
        ? 400
        : e.type === 'overloaded_error'
          ? 529
          : 500
  return statusError(scope.op, status, message, null)
}

/** The {@link ModelResponse} of a whole (not streamed) messages answer. */
export function anthropicResponse(scope: RequestScope, json: Json): ModelResponse {
  if (json.type === 'error') throw eventError(scope, json.error)
  const content = Array.isArray(json.content) ? (json.content as Block[]) : []
  const u = (json.usage ?? {}) as { input_tokens?: unknown; output_tokens?: unknown }
  return {
    text: content
      .filter((b) => b.type === 'text')
      .map((b) => (typeof b.text === 'string' ? b.text : ''))
      .join(''),
    toolCalls: content
      .filter((b) => b.type === 'tool_use')
      .map((b, i) => ({
        id: typeof b.id === 'string' ? b.id : `toolu_${i}`,
        name: typeof b.name === 'string' ? b.name : '',
        arguments: JSON.stringify(b.input ?? {}),
      })),
    finishReason: finishOf(json.stop_reason),
    usage: {
      inputTokens: typeof u.input_tokens === 'number' ? u.input_tokens : 0,
      outputTokens: typeof u.output_tokens === 'number' ? u.output_tokens : 0,
    },
  }
}
