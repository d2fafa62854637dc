import { IsoagentError } from '../errors.ts'
import type { Kernel } from '../kernel/kernel.ts'
import type { PermissionVerdict } from '../kernel/permissions.ts'
import type { ToolSpec } from '../kernel/tool-spec.ts'

type AnyTool = ToolSpec<Record<string, unknown>>

/** Tools added to and removed from a running session's kernel. */
export interface DynamicTools {
  has(name: string): boolean
  add(tool: AnyTool): void
  remove(name: string): void
}

/** Why a model-side call of `tool` asks when no permission rule names it (undefined: it does not). */
export type DefaultAsk = (tool: string) => string | undefined

interface KernelInternals {
  tools: Map<string, AnyTool>
  permissions: { decide(tool: string, args: unknown): PermissionVerdict }
}

/**
 * The kernel's tool table and permission policy. The kernel has no public way yet to change
 * its tool set after construction nor to add a default `ask` for some tools; this is the one
 * place that reaches in, and it checks the shapes it relies on so a change of the kernel fails
 * here, loudly, at session creation. TODO: replace with `Kernel.register/unregister` and a
 * per-tool default decision once the kernel offers them.
 */
function internals(kernel: Kernel): KernelInternals {
  const k = kernel as unknown as Partial<KernelInternals>
  if (!(k.tools instanceof Map) || typeof k.permissions?.decide !== 'function')
    throw new IsoagentError('internal', 'the kernel no longer has the shape the MCP client uses')
  return k as KernelInternals
}

/** Add and remove tools of `kernel` while it runs. */
export function dynamicTools(kernel: Kernel): DynamicTools {
  const tools = internals(kernel).tools
  return {
    has: (name) => tools.has(name),
    add: (tool) => void tools.set(tool.name, tool),
    remove: (name) => void tools.delete(name),
  }
}

/**
 * Make model-side calls of the tools `ask` names wait for a human's approval when no permission
 * rule decides them (the default decision `allow` becomes `ask`; a `deny` default or any rule
 * that matches still wins).
 */
export function installDefaultAsk(kernel: Kernel, ask: DefaultAsk): void {
  const inner = internals(kernel)
  const policy = inner.permissions
  const decide = policy.decide.bind(policy)
  inner.permissions = {
    decide(tool, args) {
      const verdict = decide(tool, args)
      if (verdict.rule !== undefined || verdict.decision !== 'allow') return verdict
      const reason = ask(tool)
      return reason === undefined
        ? verdict
        : { decision: 'ask', rule: `MCP annotations: ${reason}` }
    },
  }
}
