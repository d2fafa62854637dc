import type { KernelCall, Verdict } from './call.ts'
import { describeError, errorKindOf } from './error-kind.ts'
import type { KernelParts } from './kernel-parts.ts'
import { checkPaths } from './path-arguments.ts'

/**
 * Step 4, budget and paths, the last gates before any side effect: a call cancelled meanwhile
 * stops here; the session's budget (`maxToolCalls`, `maxOutputBytes`) reserves the call or
 * refuses it (`budget_exhausted` event); and every path argument the tool declares
 * (`ToolSpec.pathArguments`) must parse and stay inside the workspace.
 */
export function checkLimits(k: KernelParts, call: KernelCall): Verdict | undefined {
  if (call.aborted) return call.cancelled('before it started')
  const exhausted = k.budget.admit()
  if (exhausted !== undefined) {
    k.events.emit({
      type: 'budget_exhausted',
      ...call.base,
      reason: exhausted,
      timestamp: Date.now(),
    })
    return call.reject(`${call.name} refused: ${exhausted}`, {
      type: 'permission_denied',
      message: exhausted,
      reason: 'budget_exhausted',
    })
  }
  try {
    checkPaths(call.tool, call.request.args, k.root)
  } catch (error) {
    return call.reject(
      `${call.name} refused: ${describeError(error)}`,
      errorKindOf(error, call.name),
    )
  }
  return undefined
}
