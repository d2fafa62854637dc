import { WorkspacePath } from '../workspace/workspace-path.ts'
import { DEFAULT_PATH_ARGUMENTS, type ToolSpec } from './tool-spec.ts'

/** Reads the values of one declared path argument out of a call's arguments. */
type PathReader = (args: Record<string, unknown>, into: unknown[]) => void

const readers = new WeakMap<object, PathReader[]>()

/** `name` reads a top-level argument; `name[].key` the `key` of each object of an array argument. */
function compile(spec: string): PathReader {
  const at = spec.indexOf('[].')
  if (at === -1) return (args, into) => void into.push(args[spec])
  const list = spec.slice(0, at)
  const key = spec.slice(at + 3)
  return (args, into) => {
    const items = args[list]
    if (!Array.isArray(items)) return
    for (const item of items) into.push((item as Record<string, unknown> | null)?.[key])
  }
}

function readersOf(tool: ToolSpec<Record<string, unknown>>): PathReader[] {
  let compiled = readers.get(tool)
  if (compiled === undefined) {
    compiled = (tool.pathArguments ?? DEFAULT_PATH_ARGUMENTS).map(compile)
    readers.set(tool, compiled)
  }
  return compiled
}

/** The values of a call's path arguments, as the tool declares them (`ToolSpec.pathArguments`). */
export function pathValues(tool: ToolSpec<Record<string, unknown>>, args: unknown): unknown[] {
  const values: unknown[] = []
  if (typeof args !== 'object' || args === null) return values
  for (const read of readersOf(tool)) read(args as Record<string, unknown>, values)
  return values
}

/**
 * Every path argument of the call must parse and stay inside `root` before the tool runs; throws
 * the `IsoagentError` of the first that does not.
 */
export function checkPaths(
  tool: ToolSpec<Record<string, unknown>>,
  args: unknown,
  root: string,
): void {
  for (const p of pathValues(tool, args))
    if (typeof p === 'string') WorkspacePath.parse(p, { root })
}
