import { IsoagentError } from '../errors.ts'
import { toolFailure, type ToolResult } from '../tool-result.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'
import { Budget } from './budget.ts'
import { KernelCall, type ActiveTool, type InvokeRequest, type Verdict } from './call.ts'
import { Carryover } from './carryover.ts'
import { Confirmations, type PendingConfirmation } from './confirmations.ts'
import { describeError } from './error-kind.ts'
import { eventArgs } from './event-args.ts'
import { EventHub, type SessionEvent } from './events.ts'
import { validateTimeouts, type KernelOptions } from './kernel-options.ts'
import type { KernelParts } from './kernel-parts.ts'
import { PermissionPolicy } from './permissions.ts'
import { uriSchemeOf, type ReadOnlyMount } from './read-only-mount.ts'
import { Sanitizer } from './sanitize.ts'
import { Scheduler } from './scheduler.ts'
import { admit } from './step-admit.ts'
import { authorize } from './step-authorize.ts'
import { checkLimits } from './step-limits.ts'
import { preHook } from './step-pre-hook.ts'
import { run } from './step-run.ts'
import { settle } from './step-settle.ts'
import type { ToolSpec } from './tool-spec.ts'

export type { ActiveTool, CallFrame, InvokeRequest } from './call.ts'
export type { KernelOptions } from './kernel-options.ts'
export {
  CANCEL_GRACE_MS,
  DEFAULT_TOOL_TIMEOUT_MS,
  OWN_DEADLINE_MARGIN_MS,
} from './kernel-options.ts'
export { eventArgs } from './event-args.ts'
export type { SessionEvent }

/**
 * The invocation kernel. Every call — model, nested, host — goes through {@link Kernel.invoke},
 * a pipeline of named steps, each a function of the kernel's parts and the call that either
 * lets the call go on or decides it: admit (`step-admit.ts`) → authorize → pre-hook → budget and
 * paths (all before any side effect; host-direct calls skip the permission rules only) → run
 * (queue, deadline, cancellation) → settle (post-hook, sanitisation, projection, events). What
 * differs between tools (nesting, default deadline, path arguments) is declared by each
 * `ToolSpec`, not named here. It never throws.
 */
export class Kernel {
  readonly workspace: WorkspaceServices
  readonly events: EventHub
  readonly budget: Budget
  readonly options: KernelOptions
  private readonly tools: Map<string, ToolSpec<Record<string, unknown>>>
  private readonly active = new Map<string, ActiveTool>()
  private readonly closing = new AbortController()
  private readonly confirmations = new Confirmations()
  private readonly carryover = new Carryover()
  private readonly sanitizer: Sanitizer
  private readonly parts: KernelParts

  constructor(
    workspace: WorkspaceServices,
    tools: readonly ToolSpec<Record<string, unknown>>[],
    options: KernelOptions,
  ) {
    this.workspace = workspace
    this.options = options
    this.tools = new Map(tools.map((t) => [t.name, t]))
    this.budget = new Budget(options.budget, options.budgetUsed)
    this.sanitizer = new Sanitizer(options.redactSecrets)
    this.events = new EventHub(options.eventBufferSize)
    this.events.setSanitizer((e) => this.sanitizer.value(e))
    validateTimeouts(options.toolTimeoutMs)
    this.parts = {
      workspace,
      options,
      tools: this.tools,
      events: this.events,
      budget: this.budget,
      permissions: new PermissionPolicy(options.permissions),
      confirmations: this.confirmations,
      sanitizer: this.sanitizer,
      scheduler: new Scheduler(),
      carryover: this.carryover,
      closing: this.closing.signal,
      root: workspace.capabilities.localRoot ?? '/',
      mounts: new Map(),
      invoke: (request) => this.invoke(request),
    }
  }

  /** Run one call through the steps. Always resolves to a {@link ToolResult}. */
  async invoke(request: InvokeRequest): Promise<ToolResult> {
    const k = this.parts
    const call = new KernelCall(request, k.events, k.closing)
    this.active.set(call.id, call.entry)
    try {
      const verdict: Verdict =
        admit(k, call) ??
        (await authorize(k, call)) ??
        (await preHook(k, call)) ??
        checkLimits(k, call) ??
        (await run(k, call))
      return await settle(k, call, verdict)
    } catch (error) {
      // Defensive: a bug in the kernel itself still yields a typed result.
      const message = describeError(error)
      return toolFailure(call.name, `${call.name} failed inside the kernel: ${message}`, {
        type: 'transport',
        op: call.name,
        message,
      })
    } finally {
      call.unlink()
      // A call given up on (still running) stays listed until the tool really ends.
      if (call.settledLater === undefined) this.active.delete(call.id)
      else void call.settledLater.finally(() => this.active.delete(call.id))
    }
  }

  /** The tools offered to callers (hidden aliases are callable but not listed). */
  list(): ToolSpec<Record<string, unknown>>[] {
    return [...this.tools.values()].filter((t) => t.hidden !== true)
  }

  /**
   * Redact `secrets` from every later output, metadata value and event of this session, as
   * those of `options.redactSecrets` are (credentials of a server added while it runs).
   */
  addRedactSecrets(secrets: readonly string[]): void {
    this.sanitizer.add(secrets)
  }

  /** The host secrets this session redacts: `options.redactSecrets` and those added since. */
  redactSecrets(): readonly string[] {
    return this.sanitizer.list()
  }

  /** `value` (a deep copy) with the session's secrets and credential patterns redacted. */
  sanitize<T>(value: T): T {
    return this.sanitizer.value(value)
  }

  /** A tool by name, hidden ones included. */
  tool(name: string): ToolSpec<Record<string, unknown>> | undefined {
    return this.tools.get(name)
  }

  /**
   * Offer `tool` from now on, replacing one of the same name: for tools that come and go with
   * the session (skills, MCP servers). Calls already running are not affected.
   */
  addTool(tool: ToolSpec<Record<string, unknown>>): void {
    this.tools.set(tool.name, tool)
  }

  /**
   * Serve paths that start with `scheme` (`skill://`) from `mount`, read-only, from now on
   * (`undefined` unmounts). `read` opens them; every other tool sees workspace paths only.
   */
  mount(scheme: string, mount: ReadOnlyMount | undefined): void {
    if (uriSchemeOf(scheme) !== scheme)
      throw new IsoagentError('invalid_argument', `not a URI scheme with its ://: ${scheme}`)
    if (mount === undefined) this.parts.mounts.delete(scheme)
    else this.parts.mounts.set(scheme, mount)
  }

  /** See {@link PermissionPolicy.setDefaultAsk}: tools that ask when no rule decides them. */
  setDefaultAsk(ask: (tool: string) => string | undefined): void {
    this.parts.permissions.setDefaultAsk(ask)
  }

  /** Stop offering the tool `name` (calls already running finish); whether it was offered. */
  removeTool(name: string): boolean {
    return this.tools.delete(name)
  }

  /** A call's arguments as events show them (signed URLs and the like hidden by the tool). */
  eventArgs(name: string, args: unknown): unknown {
    const tool = this.tools.get(name)
    return tool === undefined ? args : eventArgs(tool, args)
  }

  activeTools(): ActiveTool[] {
    return [...this.active.values()].map((a) => ({ ...a }))
  }

  pendingConfirmations(): PendingConfirmation[] {
    return this.confirmations.list()
  }

  confirm(id: string, approved: boolean): void {
    this.confirmations.answer(id, approved)
  }

  /**
   * Settle a pending confirmation nobody can be asked about (`why`: e.g. "the MCP client did not
   * declare elicitation"): the call fails with `permission_denied`, reason
   * `confirmation_unavailable`, saying so (it is not reported as a refusal).
   */
  cannotConfirm(id: string, why: string): void {
    this.confirmations.unavailable(id, why)
  }

  get closed(): boolean {
    return this.closing.signal.aborted
  }

  /** Refuse new calls, abort running ones (and pending confirmations), end event streams. */
  close(reason = 'session closed'): void {
    if (this.closed) return
    this.closing.abort(new IsoagentError('cancelled', reason))
    this.carryover.clear()
    this.events.close()
  }
}
