import { IsoagentError } from '../errors.ts'
import { toolFailure, type ToolResult } from '../tool-result.ts'
import type { ToolContext, ToolSpec } from '../tools/tool.ts'
import { WorkspacePath } from '../workspace/workspace-path.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'
import { describeError, errorKindOf } from './error-kind.ts'
import type { Origin } from './origin.ts'
import { validateToolArgs } from './validate.ts'

/** A call currently running in a session. */
export interface ActiveTool {
  id: string
  name: string
  origin: Origin
  startedAt: number
}

/** One request to the kernel. */
export interface InvokeRequest {
  name: string
  args: unknown
  origin: Origin
  signal?: AbortSignal
}

let callCounter = 0

function newCallId(): string {
  callCounter = (callCounter + 1) % Number.MAX_SAFE_INTEGER
  return `call_${Date.now().toString(36)}_${callCounter.toString(36)}`
}

/**
 * The invocation kernel: every call, from any origin, goes through {@link Kernel.invoke}, which
 * validates arguments against the tool's schema before anything runs, contains paths, runs the
 * tool with a cancellation signal, and turns every failure into a typed result. It never throws.
 */
export class Kernel {
  readonly workspace: WorkspaceServices
  private readonly tools: Map<string, ToolSpec<Record<string, unknown>>>
  private readonly active = new Map<string, ActiveTool>()
  private readonly closing = new AbortController()

  constructor(workspace: WorkspaceServices, tools: readonly ToolSpec<Record<string, unknown>>[]) {
    this.workspace = workspace
    this.tools = new Map(tools.map((t) => [t.name, t]))
  }

  /** Registered tools, in registration order. */
  list(): ToolSpec<Record<string, unknown>>[] {
    return [...this.tools.values()]
  }

  activeTools(): ActiveTool[] {
    return [...this.active.values()].map((a) => ({ ...a }))
  }

  get closed(): boolean {
    return this.closing.signal.aborted
  }

  /** Run one call. Always resolves to a {@link ToolResult}. */
  async invoke(request: InvokeRequest): Promise<ToolResult> {
    const { name } = request
    if (this.closed) return toolFailure(name, 'session is closed', { type: 'cancelled', op: name })
    const tool = this.tools.get(name)
    if (tool === undefined) {
      const message = `unknown tool "${name}"; this session offers: ${[...this.tools.keys()].join(', ')}`
      return toolFailure(name, message, { type: 'unsupported', message })
    }
    const invalid = validateToolArgs(name, request.args)
    if (invalid !== undefined) {
      const message = `invalid arguments for ${name}: ${invalid}`
      return toolFailure(name, message, { type: 'invalid_argument', message })
    }
    const controller = new AbortController()
    const abort = () => controller.abort(this.closing.signal.reason ?? request.signal?.reason)
    this.closing.signal.addEventListener('abort', abort, { once: true })
    request.signal?.addEventListener('abort', abort, { once: true })
    if (request.signal?.aborted) abort()

    const id = newCallId()
    this.active.set(id, { id, name, origin: request.origin, startedAt: Date.now() })
    const workspace = this.workspace
    const root = workspace.capabilities.localRoot ?? '/'
    const context: ToolContext = {
      workspace,
      signal: controller.signal,
      callId: id,
      path: (input) => WorkspacePath.parse(input, { root }),
    }
    try {
      if (controller.signal.aborted)
        throw new IsoagentError('cancelled', `${name} was cancelled before it started`)
      const result = await tool.run(request.args as Record<string, unknown>, context)
      return result
    } catch (error) {
      const errorKind = errorKindOf(error, name)
      return toolFailure(name, `${name} failed: ${describeError(error)}`, errorKind)
    } finally {
      this.active.delete(id)
      this.closing.signal.removeEventListener('abort', abort)
      request.signal?.removeEventListener('abort', abort)
    }
  }

  /** Refuse new calls and abort running ones. */
  close(reason = 'session closed'): void {
    if (!this.closed) this.closing.abort(new IsoagentError('cancelled', reason))
  }
}
