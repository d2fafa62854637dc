import { IsoagentError } from '../errors.ts'
import type { ArtifactStore } from '../projection/artifact-store.ts'
import type { ToolResultTransformPolicyV1 } from '../projection/policy.ts'
import type { BudgetLimits, BudgetUsage } from './budget.ts'
import type { ToolHooks } from './hooks.ts'
import type { PermissionRules } from './permissions.ts'

/** Deadline of a tool that declares no `timeoutMs` of its own and is not named in `toolTimeoutMs`. */
export const DEFAULT_TOOL_TIMEOUT_MS = 120_000
/** How long a cancelled or timed-out tool gets to stop before its result is given up on. */
export const CANCEL_GRACE_MS = 2_000
/**
 * Time the kernel's deadline leaves past a tool's own deadline (`ToolSpec.ownDeadlineMs`), for
 * the tool to stop its work (e.g. kill a process group and drain its pipes) and report.
 */
export const OWN_DEADLINE_MARGIN_MS = 5_000

/** Governance and projection settings of a kernel. */
export interface KernelOptions {
  policy: ToolResultTransformPolicyV1
  artifactStore: ArtifactStore
  permissions?: PermissionRules
  hooks?: ToolHooks
  budget?: BudgetLimits
  budgetUsed?: BudgetUsage
  /** One deadline for every tool, or per-tool deadlines (ms) over the tools' own defaults. */
  toolTimeoutMs?: number | Record<string, number>
  hookTimeoutMs?: number
  /** How long an `ask` waits for an answer before it counts as refused (default: no limit). */
  confirmationTimeoutMs?: number
  redactSecrets?: string[]
  eventBufferSize?: number
}

/** Refuse a `toolTimeoutMs` that is not a whole number of ms in 1..86400000 (or a record of them). */
export function validateTimeouts(value: KernelOptions['toolTimeoutMs']): void {
  const check = (v: unknown, what: string) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 86_400_000) {
      throw new IsoagentError(
        'invalid_argument',
        `${what} must be an integer number of ms in 1..86400000`,
      )
    }
  }
  if (value === undefined) return
  if (typeof value === 'number') return check(value, 'toolTimeoutMs')
  if (typeof value !== 'object' || value === null)
    throw new IsoagentError('invalid_argument', 'toolTimeoutMs must be a number or a record')
  for (const [k, v] of Object.entries(value)) check(v, `toolTimeoutMs.${k}`)
}
