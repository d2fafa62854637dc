/** Risk values under which an otherwise safe tool still runs without confirmation. */
const ROUTINE_RISKS = new Set(['read', 'read_only', 'read-only', 'routine', 'closed_world_read'])
/** Keys naming a tool's risk, in `annotations` or `_meta`. */
const RISK_KEYS = ['x-a3s-risk', 'a3s/risk', 'a3s.risk', 'risk'] as const

/** What the gating rule reads of a listed MCP tool. */
export interface McpToolHints {
  annotations?: Record<string, unknown> | undefined
  _meta?: Record<string, unknown> | undefined
}

/**
 * Why a model-side call of this tool needs a human's approval, or undefined when it does not:
 * only a tool annotated `readOnlyHint: true`, `openWorldHint: false`, `destructiveHint` not
 * true, with no risk key other than a routine one, runs without asking. Missing annotations ask.
 */
export function confirmationReason(tool: McpToolHints): string | undefined {
  const a = tool.annotations ?? {}
  if (a.readOnlyHint !== true) return 'the MCP tool is not annotated readOnlyHint: true'
  if (a.destructiveHint === true) return 'the MCP tool is annotated destructiveHint: true'
  if (a.openWorldHint !== false) return 'the MCP tool is not annotated openWorldHint: false'
  for (const source of [a, tool._meta ?? {}]) {
    for (const key of RISK_KEYS) {
      const risk = source[key]
      if (risk !== undefined && !ROUTINE_RISKS.has(String(risk).toLowerCase()))
        return `the MCP tool declares risk ${JSON.stringify(risk)}`
    }
  }
  return undefined
}
