import type { ModelFinishReason, ModelUsage } from '../llm/language-model.ts'
import type { ToolErrorKind } from '../tool-result.ts'

/** Why a run of the agent loop ended. `max_steps`: the model still wanted tools at the limit. */
export type AgentFinishReason = 'stop' | 'max_steps' | 'length' | 'content_filter' | 'other'

/** A tool call the model made, its arguments parsed (the raw text when they did not parse). */
export interface AgentToolCall {
  /** The model's id of the call. */
  id: string
  name: string
  args: unknown
}

/** What a tool call gave back to the model. */
export interface AgentToolResult {
  toolCallId: string
  toolName: string
  exitCode: number
  errorKind?: ToolErrorKind
  /** The (projected) output the model saw. */
  output: string
}

/** One model request of a run and the tool calls it asked for. */
export interface AgentStep {
  /** 1-based step number within the run. */
  step: number
  text: string
  toolCalls: AgentToolCall[]
  toolResults: AgentToolResult[]
  finishReason: ModelFinishReason
  usage: ModelUsage
}

/** What `session.send()` resolves to. `text` is the model's final answer. */
export interface AgentRunResult {
  text: string
  steps: AgentStep[]
  usage: ModelUsage
  finishReason: AgentFinishReason
}

/**
 * One event of `session.stream()`, tagged by `type`: each step opens with `step_start` and
 * closes with `step_end`; between them come the model's `text_delta`s, its `tool_call`s, the
 * `tool_output_delta`s of the tools while they run and one `tool_result` per call. A run ends with
 * exactly one `finish` (or the iterator throws).
 */
export type AgentEvent =
  | { type: 'step_start'; step: number }
  | { type: 'text_delta'; step: number; delta: string }
  | { type: 'tool_call'; step: number; toolCallId: string; toolName: string; args: unknown }
  | { type: 'tool_output_delta'; step: number; toolCallId: string; toolName: string; delta: string }
  | ({ type: 'tool_result'; step: number; metadata?: Record<string, unknown> } & AgentToolResult)
  | { type: 'step_end'; step: number; finishReason: ModelFinishReason; usage: ModelUsage }
  | {
      type: 'finish'
      text: string
      steps: number
      usage: ModelUsage
      finishReason: AgentFinishReason
    }
