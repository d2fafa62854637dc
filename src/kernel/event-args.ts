import type { ToolSpec } from './tool-spec.ts'

/** A call's arguments as events show them (a tool may hide parts, e.g. signed URLs). */
export function eventArgs(tool: ToolSpec<Record<string, unknown>>, args: unknown): unknown {
  if (tool.redactArgs === undefined || typeof args !== 'object' || args === null) return args
  try {
    return tool.redactArgs(args as Record<string, unknown>)
  } catch {
    return args
  }
}
