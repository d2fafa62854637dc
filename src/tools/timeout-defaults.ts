import { builtinTools } from './builtin.ts'
import { TASK_TIMEOUT_MS } from './task/task.ts'

/**
 * The default deadlines (ms) the built-in tools declare (`ToolSpec.timeoutMs`): 60 s for `read`,
 * `write`, `edit`, `patch`; 30 s for `ls`; 10 min for `batch`; 30 min for `task`. Tools that
 * declare none get `DEFAULT_TOOL_TIMEOUT_MS`. A summary for readers: the kernel reads each tool's
 * own declaration, and a session's `toolTimeoutMs` overrides it.
 */
export const TOOL_TIMEOUT_DEFAULTS: Readonly<Record<string, number>> = Object.freeze({
  ...Object.fromEntries(
    builtinTools.flatMap((t) => (t.timeoutMs === undefined ? [] : [[t.name, t.timeoutMs]])),
  ),
  task: TASK_TIMEOUT_MS,
  parallel_task: TASK_TIMEOUT_MS,
})
