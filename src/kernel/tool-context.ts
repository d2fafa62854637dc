import { WorkspacePath } from '../workspace/workspace-path.ts'
import type { CallFrame, KernelCall } from './call.ts'
import type { KernelParts } from './kernel-parts.ts'
import type { Origin } from './origin.ts'
import { eventArgs } from './event-args.ts'
import { OutputRedactor } from './output-redactor.ts'
import { reauthorize } from './reauthorize.ts'
import type { ToolContext, ToolSpec } from './tool-spec.ts'

/**
 * What a running call's tool gets: the workspace, the call's signal, path containment, nested
 * calls (re-entering the kernel as children of this call), the carryover and streamed output.
 */
export function toolContext(
  k: KernelParts,
  call: KernelCall,
): ToolContext & { flushOutput(): void } {
  const { parent } = call.request
  // Streamed output goes out redacted across chunks; what is held goes out once the call ends.
  const streamed = new OutputRedactor(k.sanitizer)
  const deliver = (delta: string) => {
    if (delta === '') return
    call.request.onOutput?.(delta)
    if (k.events.hasSubscribers)
      k.events.emit({ type: 'tool_output_delta', ...call.base, delta, timestamp: Date.now() })
  }
  const frame: CallFrame = {
    id: call.id,
    name: call.name,
    origin: call.origin,
    ancestors: parent ? [...parent.ancestors, parent.name] : [],
  }
  const origin = childOrigin(call.origin, call.tool)
  return {
    workspace: k.workspace,
    // Made when the tool first reads it (see KernelCall).
    get signal() {
      return call.signal
    },
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
    authorize: (precise) =>
      reauthorize(
        {
          policy: k.permissions,
          confirmations: k.confirmations,
          events: k.events,
          base: call.base,
          signal: call.signal,
          confirmationTimeoutMs: k.options.confirmationTimeoutMs ?? Number.POSITIVE_INFINITY,
          pendingArgs: (a) => k.sanitizer.value(a),
          eventArgs: (a) => eventArgs(call.tool, a),
        },
        precise,
      ),
    carryover: k.carryover,
    outputLimitBytes: k.options.policy.max_output_bytes,
    mounts: k.mounts,
    emitOutput: (delta) =>
      deliver(
        call.tool.streamedOutput === 'messages' ? k.sanitizer.text(delta) : streamed.push(delta),
      ),
    flushOutput: () => deliver(streamed.flush()),
  }
}

/** Children of a container the host called keep the host's trust; all others are governed. */
function childOrigin(parentOrigin: Origin, parent: ToolSpec<Record<string, unknown>>): Origin {
  const hostCalled = parentOrigin === 'host_direct' || parentOrigin === 'host_direct_nested'
  return hostCalled && parent.nesting?.container === true ? 'host_direct_nested' : 'nested'
}
