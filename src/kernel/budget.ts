import { IsoagentError } from '../errors.ts'

/** Session-wide limits, checked before any side effect of a call. */
export interface BudgetLimits {
  /** Most tool calls admitted (nested calls included). */
  maxToolCalls?: number
  /** Most bytes of (projected) output returned in all. */
  maxOutputBytes?: number
}

/** Consumption so far; kept in snapshots so a resumed session continues the same budget. */
export interface BudgetUsage {
  tool_calls: number
  output_bytes: number
}

/** Tracks a session's budget. */
export class Budget {
  readonly limits: BudgetLimits
  readonly used: BudgetUsage

  constructor(limits: BudgetLimits = {}, used: BudgetUsage = { tool_calls: 0, output_bytes: 0 }) {
    if (typeof limits !== 'object' || limits === null)
      throw new IsoagentError('invalid_argument', 'budget must be an object')
    for (const [key, value] of Object.entries(limits)) {
      if (key !== 'maxToolCalls' && key !== 'maxOutputBytes') {
        throw new IsoagentError('invalid_argument', `budget: unknown field "${key}"`)
      }
      if (
        value !== undefined &&
        (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
      ) {
        throw new IsoagentError('invalid_argument', `budget.${key} must be a non-negative integer`)
      }
    }
    this.limits = { ...limits }
    this.used = { ...used }
  }

  /** Why the next call may not start, or undefined. Reserves the call when it may. */
  admit(): string | undefined {
    const { maxToolCalls, maxOutputBytes } = this.limits
    if (maxToolCalls !== undefined && this.used.tool_calls >= maxToolCalls) {
      return `budget exhausted: maxToolCalls=${maxToolCalls} calls already made`
    }
    if (maxOutputBytes !== undefined && this.used.output_bytes >= maxOutputBytes) {
      return `budget exhausted: maxOutputBytes=${maxOutputBytes} (${this.used.output_bytes} bytes of output already returned)`
    }
    this.used.tool_calls++
    return undefined
  }

  /** Count output returned to the caller. */
  spend(outputBytes: number): void {
    this.used.output_bytes += outputBytes
  }
}
