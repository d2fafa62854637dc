import type { CallFrame, KernelCall, Verdict } from './call.ts'
import type { KernelParts } from './kernel-parts.ts'
import type { ToolSpec } from './tool-spec.ts'
import { validateToolArgs } from './validate.ts'

/**
 * Step 1, admit: a call already cancelled (or into a closed session), an unknown tool, a nesting
 * the tools' `nesting` flags forbid and arguments that fail the tool's schema are refused here.
 * An admitted call knows its tool and is `gate_pending`.
 */
export function admit(k: KernelParts, call: KernelCall): Verdict | undefined {
  if (call.aborted)
    return call.cancelled(k.closing.aborted ? 'because the session is closed' : 'before it started')
  const { name } = call
  const tool = k.tools.get(name)
  if (tool === undefined) {
    const offered = [...k.tools.values()].filter((t) => t.hidden !== true).map((t) => t.name)
    const message = `unknown tool "${name}"; this session offers: ${offered.join(', ')}`
    return call.reject(message, { type: 'unsupported', message })
  }
  const nesting = nestingRefusal(k, tool, call.request.parent)
  if (nesting !== undefined)
    return call.reject(nesting, { type: 'invalid_argument', message: nesting })
  const args = call.request.args
  const invalid = tool.validate ? tool.validate(args) : validateToolArgs(name, args)
  if (invalid !== undefined) {
    const message = `invalid arguments for ${name}: ${invalid}`
    return call.reject(message, { type: 'invalid_argument', message })
  }
  call.admit(tool)
  call.setState('admitted')
  call.setState('gate_pending')
  return undefined
}

/** Why `tool` may not run below `parent` (`ToolSpec.nesting`), or undefined when it may. */
function nestingRefusal(
  k: KernelParts,
  tool: ToolSpec<Record<string, unknown>>,
  parent: CallFrame | undefined,
): string | undefined {
  const nesting = tool.nesting
  if (parent === undefined || nesting === undefined) return undefined
  const { name } = tool
  if (nesting.nonReentrant === true && (parent.name === name || parent.ancestors.includes(name)))
    return `${name} cannot be nested inside ${name}`
  const runsAgents = (n: string) => k.tools.get(n)?.nesting?.runsAgents === true
  if (nesting.runsAgents === true && (runsAgents(parent.name) || parent.ancestors.some(runsAgents)))
    return `${name} cannot be called from inside a task: sub-agents do not spawn sub-agents`
  return undefined
}
