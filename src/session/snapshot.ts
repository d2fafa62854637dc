import { IsoagentError } from '../errors.ts'
import type { BudgetLimits, BudgetUsage } from '../kernel/budget.ts'
import type { PermissionRules } from '../kernel/permissions.ts'
import type { ModelMessage } from '../llm/language-model.ts'
import {
  ToolResultTransformPolicy,
  type ToolResultTransformPolicyV1,
} from '../projection/policy.ts'
import type { WorkspaceDescriptor } from '../workspace/workspace-services.ts'

/** Schema id of a session snapshot. */
export const SNAPSHOT_SCHEMA = 'isoagent.session-snapshot.v1'

/**
 * Everything a session needs to resume elsewhere, as plain JSON. Functions (hooks, custom tools)
 * and secrets (`redactSecrets`) are never stored: pass them again to `resumeSession`.
 */
export interface SessionSnapshot {
  schema: typeof SNAPSHOT_SCHEMA
  created_at: string
  workspace: WorkspaceDescriptor
  tool_result_transform_policy: ToolResultTransformPolicyV1
  permissions: PermissionRules
  budget: { limits: BudgetLimits; used: BudgetUsage }
  tool_timeout_ms: number | Record<string, number> | null
  tools: string[]
  /**
   * The conversation with the model (`session.send`/`stream`), in the order the model saw it.
   * Absent in snapshots of sessions that never talked to a model; resuming continues it.
   */
  conversation?: { messages: ModelMessage[] }
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool'])

function isMessage(m: unknown): boolean {
  if (typeof m !== 'object' || m === null) return false
  const r = m as Record<string, unknown>
  if (!ROLES.has(r.role as string) || typeof r.content !== 'string') return false
  if (r.role === 'tool') return typeof r.toolCallId === 'string' && typeof r.toolName === 'string'
  if (r.role === 'assistant' && r.toolCalls !== undefined) {
    return (
      Array.isArray(r.toolCalls) &&
      r.toolCalls.every(
        (c: unknown) =>
          typeof c === 'object' &&
          c !== null &&
          ['id', 'name', 'arguments'].every(
            (k) => typeof (c as Record<string, unknown>)[k] === 'string',
          ),
      )
    )
  }
  return true
}

/** Check the shape of a snapshot read back from storage. */
export function parseSnapshot(input: unknown): SessionSnapshot {
  const refuse = (why: string) =>
    new IsoagentError('invalid_argument', `invalid session snapshot: ${why}`)
  if (typeof input !== 'object' || input === null) throw refuse('not an object')
  const s = input as Partial<SessionSnapshot>
  if (s.schema !== SNAPSHOT_SCHEMA) throw refuse(`schema must be "${SNAPSHOT_SCHEMA}"`)
  if (
    typeof s.workspace !== 'object' ||
    s.workspace === null ||
    typeof s.workspace.kind !== 'string'
  )
    throw refuse('missing workspace descriptor')
  ToolResultTransformPolicy.validate(s.tool_result_transform_policy)
  if (typeof s.budget !== 'object' || s.budget === null) throw refuse('missing budget')
  if (s.conversation !== undefined) {
    const messages = (s.conversation as { messages?: unknown } | null)?.messages
    if (!Array.isArray(messages) || !messages.every(isMessage))
      throw refuse('conversation.messages must be an array of model messages')
  }
  return s as SessionSnapshot
}
