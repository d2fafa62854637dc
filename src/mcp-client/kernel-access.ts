import type { Kernel } from '../kernel/kernel.ts'
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

/** Add and remove tools of `kernel` while it runs. */
export function dynamicTools(kernel: Kernel): DynamicTools {
  return {
    has: (name) => kernel.tool(name) !== undefined,
    add: (tool) => kernel.addTool(tool),
    remove: (name) => void kernel.removeTool(name),
  }
}

/**
 * Make model-side calls of the tools `ask` names wait for a human's approval when no permission
 * rule decides them (the default decision `allow` becomes `ask`; a `deny` default or any rule
 * that matches still wins).
 */
export function installDefaultAsk(kernel: Kernel, ask: DefaultAsk): void {
  kernel.setDefaultAsk((tool) => {
    const reason = ask(tool)
    return reason === undefined ? undefined : `MCP annotations: ${reason}`
  })
}
