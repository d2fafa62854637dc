import { WorkspacePath } from '../workspace/workspace-path.ts'
import type { CallFrame, KernelCall } from './call.ts'
import type { KernelParts } from './kernel-parts.ts'
import type { Origin } from './origin.ts'
import type { ToolContext, ToolSpec } from './tool-spec.ts'

/**
 * What a running call's tool gets: the workspace, the call's signal, path containment, nested
 * calls (re-entering the kernel as children of this call), the carryover and streamed output.
 */
export function toolContext(k: KernelParts, call: KernelCall): ToolContext {
  const { parent } = call.request
  const frame: CallFrame = {
    id: call.id,
    name: call.name,
    origin: call.origin,
    ancestors: parent ? [...parent.ancestors, parent.name] : [],
  }
  const origin = childOrigin(call.origin, call.tool)
  return {
    workspace: k.workspace,
    signal: call.signal,
    callId: call.id,
    path: (input) => WorkspacePath.parse(input, { root: k.root }),
    invoke: (name, args, options) =>
      k.invoke({
        name,
        args,
        origin,
        signal: call.signal,
        ...(options?.signal !== undefined ? { stopSignal: options.signal } : {}),
        ...(options?.onOutput !== undefined ? { onOutput: options.onOutput } : {}),
        parent: frame,
      }),
    scheduling: (name) => k.tools.get(name)?.scheduling,
    carryover: k.carryover,
    outputLimitBytes: k.options.policy.max_output_bytes,
    emitOutput: (delta) => {
      call.request.onOutput?.(k.sanitizer.text(delta))
      if (k.events.hasSubscribers)
        k.events.emit({ type: 'tool_output_delta', ...call.base, delta, timestamp: Date.now() })
    },
  }
}

/** Children of a container the host called keep the host's trust; all others are governed. */
function childOrigin(parentOrigin: Origin, parent: ToolSpec<Record<string, unknown>>): Origin {
  const hostCalled = parentOrigin === 'host_direct' || parentOrigin === 'host_direct_nested'
  return hostCalled && parent.nesting?.container === true ? 'host_direct_nested' : 'nested'
}
