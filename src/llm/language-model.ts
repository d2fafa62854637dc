import type { JsonSchema } from '../kernel/tool-spec.ts'

/** What a model can do; generate_object picks its mode and the agent loop its requests by these. */
export interface ModelCapabilities {
  /** Accepts tool definitions and answers with tool calls. */
  tools: boolean
  /** Honours a forced `toolChoice` (`required` or a named tool). */
  toolChoice: boolean
  /** Native JSON Schema output (`response_format: json_schema`, strict). */
  jsonSchema: boolean
  /** JSON object mode (`response_format: json_object`). */
  jsonObject: boolean
  /** `stream()` yields parts as they arrive (otherwise it yields one response's parts at once). */
  streaming: boolean
}

/** A tool call the model asked for. `arguments` is the raw JSON text the model produced. */
export interface ModelToolCall {
  id: string
  name: string
  arguments: string
}

/** One message of a conversation, in the order the model sees them. */
export type ModelMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ModelToolCall[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string; isError?: boolean }

/** A tool offered to the model. */
export interface ModelTool {
  name: string
  description: string
  parameters: JsonSchema
}

/** Which tool the model must call: any or none of its choosing, some tool, or a named one. */
export type ModelToolChoice = 'auto' | 'none' | 'required' | { name: string }

/** The shape of the model's text answer. */
export type ModelResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema'
      name: string
      description?: string
      schema: JsonSchema
      strict: boolean
    }

/** One request to a model. */
export interface ModelRequest {
  messages: ModelMessage[]
  tools?: ModelTool[]
  toolChoice?: ModelToolChoice
  responseFormat?: ModelResponseFormat
  maxOutputTokens?: number
  temperature?: number
}

/** Tokens a request used, as the provider reported them (0 when it did not). */
export interface ModelUsage {
  inputTokens: number
  outputTokens: number
}

/** Why the model stopped. */
export type ModelFinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other'

/** A whole answer. */
export interface ModelResponse {
  text: string
  toolCalls: ModelToolCall[]
  finishReason: ModelFinishReason
  usage: ModelUsage
}

/**
 * One part of a streamed answer. Text arrives as `text_delta`s; a tool call as
 * `tool_call_delta`s (its arguments split over chunks; `id` and `name` on the first of an
 * `index`) and then one complete `tool_call`; the stream ends with exactly one `finish`.
 */
export type ModelStreamPart =
  | { type: 'text_delta'; delta: string }
  | { type: 'tool_call_delta'; index: number; id?: string; name?: string; argumentsDelta: string }
  | { type: 'tool_call'; index: number; call: ModelToolCall }
  | { type: 'finish'; finishReason: ModelFinishReason; usage: ModelUsage }

/** Per-request options. */
export interface ModelCallOptions {
  /** Cancels the request; the call then fails with an `IsoagentError` of code `cancelled`. */
  signal?: AbortSignal
}

/**
 * The model port: what generate_object, task and the agent loop use. Failures are thrown as
 * `IsoagentError`s whose code is a tool error kind: `rate_limited` (data `retry_after_ms`),
 * `transport` (I/O, 5xx, a cut stream), `timeout`, `invalid_argument` (the provider refused the
 * request, 4xx), `cancelled`.
 */
export interface LanguageModel {
  readonly provider: string
  readonly modelId: string
  readonly capabilities: ModelCapabilities
  generate(request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse>
  stream(request: ModelRequest, options?: ModelCallOptions): AsyncIterable<ModelStreamPart>
}
