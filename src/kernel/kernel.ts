import { IsoagentError } from '../errors.ts'
import type { ArtifactStore } from '../projection/artifact-store.ts'
import type { ToolResultTransformPolicyV1 } from '../projection/policy.ts'
import { projectOutput } from '../projection/project.ts'
import { utf8Length } from '../text/bytes.ts'
import { toolFailure, toolSuccess, type ToolErrorKind, type ToolResult } from '../tool-result.ts'
import type { ToolContext, ToolSpec } from './tool-spec.ts'
import { WorkspacePath } from '../workspace/workspace-path.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'
import { Budget, type BudgetLimits, type BudgetUsage } from './budget.ts'
import { Carryover } from './carryover.ts'
import { Confirmations, type PendingConfirmation } from './confirmations.ts'
import { describeError, errorKindOf } from './error-kind.ts'
import { EventHub, type CallState, type SessionEvent } from './events.ts'
import { DEFAULT_HOOK_TIMEOUT_MS, withDeadline, type ToolCall, type ToolHooks } from './hooks.ts'
import type { Origin } from './origin.ts'
import { PermissionPolicy, type PermissionRules } from './permissions.ts'
import { OutputRedactor } from './output-redactor.ts'
import { reauthorize } from './reauthorize.ts'
import { Sanitizer } from './sanitize.ts'
import { Scheduler } from './scheduler.ts'
import { validateToolArgs } from './validate.ts'

/** A call currently known to the kernel. */
export interface ActiveTool {
  id: string
  name: string
  origin: Origin
  state: CallState
  startedAt: number
  parentCallId?: string
}

/** Per-tool default deadlines (ms); other tools get {@link DEFAULT_TOOL_TIMEOUT_MS}. */
export const TOOL_TIMEOUT_DEFAULTS: Readonly<Record<string, number>> = {
  read: 60_000,
  write: 60_000,
  edit: 60_000,
  patch: 60_000,
  ls: 30_000,
  batch: 600_000,
  task: 1_800_000,
  parallel_task: 1_800_000,
}
/** Deadline of a tool without its own default. */
export const DEFAULT_TOOL_TIMEOUT_MS = 120_000
/** How long a cancelled or timed-out tool gets to stop before its result is given up on. */
export const CANCEL_GRACE_MS = 2_000
/**
 * Time the kernel's deadline leaves past a tool's own deadline (`ToolSpec.ownDeadlineMs`), for
 * the tool to stop its work (e.g. kill a process group and drain its pipes) and report.
 */
export const OWN_DEADLINE_MARGIN_MS = 5_000

/** Governance and projection settings of a kernel. */
export interface KernelOptions {
  policy: ToolResultTransformPolicyV1
  artifactStore: ArtifactStore
  permissions?: PermissionRules
  hooks?: ToolHooks
  budget?: BudgetLimits
  budgetUsed?: BudgetUsage
  /** One deadline for every tool, or per-tool deadlines (ms) over the defaults. */
  toolTimeoutMs?: number | Record<string, number>
  hookTimeoutMs?: number
  /** How long an `ask` waits for an answer before it counts as refused (default: no limit). */
  confirmationTimeoutMs?: number
  redactSecrets?: string[]
  eventBufferSize?: number
}

/** One request to the kernel. */
export interface InvokeRequest {
  name: string
  args: unknown
  origin: Origin
  signal?: AbortSignal
  /** A second signal that cancels the call (a container stopping its children early). */
  stopSignal?: AbortSignal
  /** The running call this one is nested in. */
  parent?: CallFrame
  /** Receives the call's streamed output (`tool_output_delta`), with or without subscribers. */
  onOutput?: (delta: string) => void
}

/** What the kernel knows of a running call, handed to nested calls. */
export interface CallFrame {
  id: string
  name: string
  origin: Origin
  ancestors: readonly string[]
}

const MODEL_SIDE: ReadonlySet<Origin> = new Set(['agent', 'nested'])
/** Built-ins whose children keep the host's trust when the host called them. */
const HOST_TRUSTED_PARENTS: ReadonlySet<string> = new Set(['batch', 'program'])
/** Tools that may not appear below themselves. */
const NON_REENTRANT: ReadonlySet<string> = new Set(['batch', 'program'])
/** Tools that run sub-agents: none of them may appear below any of them. */
const AGENT_RUNNERS: ReadonlySet<string> = new Set(['task', 'parallel_task'])
/** Tools that only run other tools: each of their children is judged on its own. */
const CONTAINERS: ReadonlySet<string> = new Set(['batch', 'program'])

let callCounter = 0
function newCallId(): string {
  callCounter = (callCounter + 1) % Number.MAX_SAFE_INTEGER
  return `call_${Date.now().toString(36)}_${callCounter.toString(36)}`
}

type Outcome = { kind: 'result'; result: ToolResult } | { kind: 'error'; error: unknown }

/**
 * The invocation kernel. Every call — model, nested, host — goes through {@link Kernel.invoke}:
 * schema validation → permission rules → human confirmation (`ask`) → pre-tool hooks → budget →
 * workspace path checks, all before any side effect (host-direct calls skip permissions and
 * confirmation only); then a per-tool queue, a deadline, cancellation, post-tool hooks,
 * sanitisation and projection. It never throws.
 */
export class Kernel {
  readonly workspace: WorkspaceServices
  readonly events: EventHub
  readonly budget: Budget
  readonly options: KernelOptions
  private readonly tools: Map<string, ToolSpec<Record<string, unknown>>>
  private readonly active = new Map<string, ActiveTool>()
  private readonly closing = new AbortController()
  private readonly permissions: PermissionPolicy
  private readonly sanitizer: Sanitizer
  private readonly scheduler = new Scheduler()
  private readonly confirmations = new Confirmations()
  private readonly carryover = new Carryover()
  private readonly root: string

  constructor(
    workspace: WorkspaceServices,
    tools: readonly ToolSpec<Record<string, unknown>>[],
    options: KernelOptions,
  ) {
    this.workspace = workspace
    this.options = options
    this.tools = new Map(tools.map((t) => [t.name, t]))
    this.permissions = new PermissionPolicy(options.permissions)
    this.budget = new Budget(options.budget, options.budgetUsed)
    this.sanitizer = new Sanitizer(options.redactSecrets)
    this.events = new EventHub(options.eventBufferSize)
    this.events.setSanitizer((e) => this.sanitizer.value(e))
    this.root = workspace.capabilities.localRoot ?? '/'
    validateTimeouts(options.toolTimeoutMs)
  }

  /** The tools offered to callers (hidden aliases are callable but not listed). */
  list(): ToolSpec<Record<string, unknown>>[] {
    return [...this.tools.values()].filter((t) => t.hidden !== true)
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

  private timeoutFor(name: string): number {
    const t = this.options.toolTimeoutMs
    if (typeof t === 'number') return t
    return t?.[name] ?? TOOL_TIMEOUT_DEFAULTS[name] ?? DEFAULT_TOOL_TIMEOUT_MS
  }

  /** Run one call. Always resolves to a {@link ToolResult}. */
  async invoke(request: InvokeRequest): Promise<ToolResult> {
    const { name, origin, parent } = request
    const id = newCallId()
    const startedAt = Date.now()
    const base = {
      toolName: name,
      callId: id,
      origin,
      ...(parent ? { parentCallId: parent.id } : {}),
    }
    const entry: ActiveTool = {
      id,
      name,
      origin,
      state: 'created',
      startedAt,
      ...(parent ? { parentCallId: parent.id } : {}),
    }
    const call: ToolCall = {
      callId: id,
      toolName: name,
      args: request.args,
      origin,
      ...(parent ? { parentCallId: parent.id } : {}),
    }
    this.active.set(id, entry)
    const setState = (state: CallState) => {
      entry.state = state
      if (this.events.hasSubscribers)
        this.events.emit({ type: 'tool_state', ...base, state, timestamp: Date.now() })
    }
    if (this.events.hasSubscribers) {
      this.events.emit({ type: 'tool_state', ...base, state: 'created', timestamp: startedAt })
    }

    const controller = new AbortController()
    const { signal, stopSignal } = request
    const abort = () =>
      controller.abort(this.closing.signal.reason ?? signal?.reason ?? stopSignal?.reason)
    this.closing.signal.addEventListener('abort', abort, { once: true })
    signal?.addEventListener('abort', abort, { once: true })
    stopSignal?.addEventListener('abort', abort, { once: true })
    if (this.closing.signal.aborted || signal?.aborted || stopSignal?.aborted) abort()
    const detach = () => {
      this.closing.signal.removeEventListener('abort', abort)
      signal?.removeEventListener('abort', abort)
      stopSignal?.removeEventListener('abort', abort)
    }

    let settledLater: Promise<unknown> | undefined
    const finish = async (
      raw: ToolResult,
      state: 'completed' | 'rejected' | 'cancelled' | 'failed',
      runHooks: boolean,
    ) => {
      const result = await this.finish(raw, call, runHooks)
      setState(state)
      if (this.events.hasSubscribers) {
        this.events.emit({
          type: 'tool_end',
          ...base,
          state,
          exitCode: result.exitCode,
          ...(result.errorKind ? { errorKind: result.errorKind } : {}),
          durationMs: Date.now() - startedAt,
          outputBytes: utf8Length(result.output),
          timestamp: Date.now(),
        })
      }
      return result
    }
    const reject = (message: string, errorKind: ToolErrorKind) =>
      finish(toolFailure(name, message, errorKind), 'rejected', false)
    const cancelled = (when: string) =>
      finish(
        toolFailure(name, `${name} was cancelled ${when}`, { type: 'cancelled', op: name }),
        'cancelled',
        false,
      )

    try {
      if (controller.signal.aborted)
        return await cancelled(this.closed ? 'because the session is closed' : 'before it started')
      const tool = this.tools.get(name)
      if (tool === undefined) {
        const message = `unknown tool "${name}"; this session offers: ${this.list()
          .map((t) => t.name)
          .join(', ')}`
        return await reject(message, { type: 'unsupported', message })
      }
      if (
        NON_REENTRANT.has(name) &&
        parent !== undefined &&
        (parent.name === name || parent.ancestors.includes(name))
      ) {
        const message = `${name} cannot be nested inside ${name}`
        return await reject(message, { type: 'invalid_argument', message })
      }
      if (
        AGENT_RUNNERS.has(name) &&
        parent !== undefined &&
        [parent.name, ...parent.ancestors].some((n) => AGENT_RUNNERS.has(n))
      ) {
        const message = `${name} cannot be called from inside a task: sub-agents do not spawn sub-agents`
        return await reject(message, { type: 'invalid_argument', message })
      }
      const invalid = tool.validate
        ? tool.validate(request.args)
        : validateToolArgs(name, request.args)
      if (invalid !== undefined) {
        const message = `invalid arguments for ${name}: ${invalid}`
        return await reject(message, { type: 'invalid_argument', message })
      }
      setState('admitted')
      setState('gate_pending')

      const mustConfirm = tool.requiresConfirmation?.(request.args as Record<string, unknown>)
      let ask: { rule?: string } | undefined = mustConfirm === undefined ? undefined : {}
      if (MODEL_SIDE.has(origin)) {
        const verdict = this.permissions.decide(name, request.args)
        if (verdict.decision === 'deny') {
          const reason = verdict.rule
            ? `denied by permission rule "${verdict.rule}"`
            : 'denied by the default permission decision'
          this.events.emit({
            type: 'permission_denied',
            ...base,
            ...(verdict.rule ? { rule: verdict.rule } : {}),
            reason,
            timestamp: Date.now(),
          })
          return await reject(`${name} ${reason}`, { type: 'permission_denied', message: reason })
        }
        if (verdict.decision === 'ask') ask = { rule: verdict.rule }
      }
      if (ask !== undefined) {
        const outcome = await this.confirmations.request(
          {
            callId: id,
            toolName: name,
            args: this.sanitizer.value(request.args),
            origin,
            ...(mustConfirm !== undefined ? { reason: mustConfirm } : {}),
          },
          this.options.confirmationTimeoutMs ?? Number.POSITIVE_INFINITY,
          controller.signal,
          (pending) =>
            this.events.emit({
              type: 'confirmation_required',
              ...base,
              confirmationId: pending.id,
              args: eventArgs(tool, request.args),
              ...(mustConfirm !== undefined ? { reason: mustConfirm } : {}),
              timestamp: Date.now(),
            }),
        )
        if (outcome === 'cancelled') return await cancelled('while waiting for confirmation')
        if (outcome !== 'approved') {
          const reason =
            outcome === 'refused'
              ? 'refused by the user'
              : 'confirmation timed out; treated as refused'
          this.events.emit({
            type: 'permission_denied',
            ...base,
            ...(ask.rule ? { rule: ask.rule } : {}),
            reason,
            timestamp: Date.now(),
          })
          return await reject(`${name} was ${reason}`, {
            type: 'permission_denied',
            message: reason,
          })
        }
      }

      const pre = this.options.hooks?.preToolUse
      if (pre !== undefined) {
        let block: { reason: string; retryable: boolean; retry_after_ms: number | null } | undefined
        try {
          const decision = await withDeadline(
            () => pre(this.freeze(call)),
            this.options.hookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
            'preToolUse hook',
          )
          if (decision && typeof decision === 'object' && 'block' in decision) {
            block = {
              reason: String(decision.block),
              retryable: decision.retryable === true,
              retry_after_ms:
                typeof decision.retry_after_ms === 'number' ? decision.retry_after_ms : null,
            }
          }
        } catch (error) {
          const message = describeError(error)
          this.events.emit({
            type: 'hook_error',
            ...base,
            hook: 'preToolUse',
            message,
            timestamp: Date.now(),
          })
          block = {
            reason: `preToolUse hook failed (call refused): ${message}`,
            retryable: false,
            retry_after_ms: null,
          }
        }
        if (block !== undefined) {
          this.events.emit({
            type: 'hook_denied',
            ...base,
            hook: 'preToolUse',
            reason: block.reason,
            timestamp: Date.now(),
          })
          return await reject(`${name} blocked by preToolUse hook: ${block.reason}`, {
            type: 'hook_denied',
            ...block,
          })
        }
      }
      if (controller.signal.aborted) return await cancelled('before it started')

      const exhausted = this.budget.admit()
      if (exhausted !== undefined) {
        this.events.emit({
          type: 'budget_exhausted',
          ...base,
          reason: exhausted,
          timestamp: Date.now(),
        })
        return await reject(`${name} refused: ${exhausted}`, {
          type: 'permission_denied',
          message: exhausted,
        })
      }

      try {
        this.checkPaths(request.args)
      } catch (error) {
        return await reject(`${name} refused: ${describeError(error)}`, errorKindOf(error, name))
      }

      let release: () => void
      try {
        release = await this.scheduler.slot(
          name,
          tool.scheduling.max_parallelism,
          controller.signal,
          parent !== undefined,
        )
      } catch {
        return await cancelled('while queued')
      }

      if (controller.signal.aborted) {
        release()
        return await cancelled('before it started')
      }
      setState('running')
      // Work kept for a next call may not survive a change of the workspace: what is kept is
      // dropped when such a call starts, and again when it has ended (a read-only call running
      // beside it may have kept work from before its writes).
      const changes = !tool.scheduling.read_only && !CONTAINERS.has(name)
      if (changes) this.carryover.clear()
      if (this.events.hasSubscribers)
        this.events.emit({
          type: 'tool_start',
          ...base,
          args: eventArgs(tool, request.args),
          timestamp: Date.now(),
        })
      const frame: CallFrame = {
        id,
        name,
        origin,
        ancestors: parent ? [...parent.ancestors, parent.name] : [],
      }
      // Streamed output goes out redacted across chunks; what is held goes out once it ends.
      const streamed = new OutputRedactor(this.sanitizer)
      const deliver = (delta: string) => {
        if (delta === '') return
        request.onOutput?.(delta)
        if (this.events.hasSubscribers)
          this.events.emit({ type: 'tool_output_delta', ...base, delta, timestamp: Date.now() })
      }
      const context: ToolContext = {
        workspace: this.workspace,
        signal: controller.signal,
        callId: id,
        path: (input) => WorkspacePath.parse(input, { root: this.root }),
        invoke: (childName, childArgs, options) =>
          this.invoke({
            name: childName,
            args: childArgs,
            origin: childOrigin(origin, name),
            signal: controller.signal,
            ...(options?.signal !== undefined ? { stopSignal: options.signal } : {}),
            ...(options?.onOutput !== undefined ? { onOutput: options.onOutput } : {}),
            parent: frame,
          }),
        scheduling: (toolName) => this.tools.get(toolName)?.scheduling,
        authorize: (precise) =>
          reauthorize(
            {
              policy: this.permissions,
              confirmations: this.confirmations,
              events: this.events,
              base,
              signal: controller.signal,
              confirmationTimeoutMs: this.options.confirmationTimeoutMs ?? Number.POSITIVE_INFINITY,
              pendingArgs: (a) => this.sanitizer.value(a),
              eventArgs: (a) => eventArgs(tool, a),
            },
            precise,
          ),
        carryover: this.carryover,
        outputLimitBytes: this.options.policy.max_output_bytes,
        emitOutput: (delta) =>
          deliver(
            tool.streamedOutput === 'messages' ? this.sanitizer.text(delta) : streamed.push(delta),
          ),
      }
      const running: Promise<Outcome> = Promise.resolve()
        .then(() => tool.run(request.args as Record<string, unknown>, context))
        .then(
          (result) => ({ kind: 'result', result }) as const,
          (error: unknown) => ({ kind: 'error', error }) as const,
        )
      settledLater = running.finally(() => {
        release()
        if (changes) this.carryover.clear()
      })

      const own = tool.ownDeadlineMs?.(request.args as Record<string, unknown>)
      const timeoutMs =
        own === undefined
          ? this.timeoutFor(name)
          : Math.max(this.timeoutFor(name), own + OWN_DEADLINE_MARGIN_MS)
      let timer: ReturnType<typeof setTimeout> | undefined
      const interrupted = new Promise<'timeout' | 'abort'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs)
        if (controller.signal.aborted) resolve('abort')
        else controller.signal.addEventListener('abort', () => resolve('abort'), { once: true })
      })
      let outcome = await Promise.race([running, interrupted])
      clearTimeout(timer)
      let interruption: 'timeout' | 'abort' | undefined
      if (outcome === 'timeout' || outcome === 'abort') {
        interruption = outcome
        if (outcome === 'timeout')
          controller.abort(new IsoagentError('timeout', `${name} exceeded ${timeoutMs} ms`))
        const grace = await Promise.race([
          running,
          new Promise<undefined>((r) => setTimeout(r, CANCEL_GRACE_MS)),
        ])
        outcome = grace ?? { kind: 'error', error: undefined }
      }
      deliver(streamed.flush())
      const stillRunning =
        interruption !== undefined && outcome.kind === 'error' && outcome.error === undefined
      if (outcome.kind === 'result' && outcome.result.exitCode === 0) {
        const result = outcome.result
        if (interruption !== undefined) {
          // The tool finished its work despite the interruption: report what happened.
          result.metadata = { ...result.metadata, interrupted: interruption }
        }
        return await finish(result, 'completed', true)
      }
      if (
        interruption === 'abort' &&
        outcome.kind === 'result' &&
        outcome.result.errorKind?.type === 'cancelled'
      ) {
        // The tool stopped in time and reported its own cancellation (with what it had done).
        return await finish(outcome.result, 'cancelled', true)
      }
      if (interruption === 'timeout') {
        const message = `${name} timed out after ${timeoutMs} ms${stillRunning ? '; it had not stopped yet, so a side effect may still complete' : ''}`
        return await finish(
          toolFailure(
            name,
            message,
            { type: 'timeout', op: name, duration_ms: timeoutMs },
            { still_running: stillRunning },
          ),
          'failed',
          true,
        )
      }
      if (interruption === 'abort') {
        const message = `${name} was cancelled while running${stillRunning ? '; it had not stopped yet, so a side effect may still complete' : ''}`
        return await finish(
          toolFailure(
            name,
            message,
            { type: 'cancelled', op: name },
            { still_running: stillRunning },
          ),
          'cancelled',
          true,
        )
      }
      if (outcome.kind === 'result') return await finish(outcome.result, 'failed', true)
      const kind = errorKindOf(outcome.error, name)
      return await finish(
        toolFailure(name, `${name} failed: ${describeError(outcome.error)}`, kind),
        kind.type === 'cancelled' ? 'cancelled' : 'failed',
        true,
      )
    } catch (error) {
      // Defensive: a bug in the kernel itself still yields a typed result.
      return toolFailure(name, `${name} failed inside the kernel: ${describeError(error)}`, {
        type: 'transport',
        op: name,
        message: describeError(error),
      })
    } finally {
      detach()
      if (settledLater === undefined) this.active.delete(id)
      else void settledLater.finally(() => this.active.delete(id))
    }
  }

  private freeze(call: ToolCall): ToolCall {
    return structuredClone(call)
  }

  /** Every path argument must parse and stay inside the root before the tool runs. */
  private checkPaths(args: unknown): void {
    if (typeof args !== 'object' || args === null) return
    const record = args as Record<string, unknown>
    const paths: unknown[] = [record.file_path, record.path]
    if (Array.isArray(record.files))
      for (const f of record.files) paths.push((f as Record<string, unknown> | null)?.path)
    for (const p of paths) if (typeof p === 'string') WorkspacePath.parse(p, { root: this.root })
  }

  /** Sanitise, run post hooks, project, attach evidence and count the output. */
  private async finish(raw: ToolResult, call: ToolCall, runHooks: boolean): Promise<ToolResult> {
    const output = this.sanitizer.text(raw.output)
    let metadata = raw.metadata === undefined ? undefined : this.sanitizer.value(raw.metadata)
    const sanitized =
      raw.exitCode === 0
        ? toolSuccess(raw.name, output, metadata)
        : toolFailure(raw.name, output, this.sanitizer.value(raw.errorKind!), metadata)
    const post = this.options.hooks?.postToolUse
    if (runHooks && post !== undefined) {
      try {
        await withDeadline(
          () => post(this.freeze(call), structuredClone({ ...sanitized })),
          this.options.hookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
          'postToolUse hook',
        )
      } catch (error) {
        const message = this.sanitizer.text(describeError(error))
        this.events.emit({
          type: 'hook_error',
          toolName: call.toolName,
          callId: call.callId,
          origin: call.origin,
          hook: 'postToolUse',
          message,
          timestamp: Date.now(),
        })
        metadata = { ...metadata, post_hook_error: message }
      }
    }
    const projection = await projectOutput(raw.name, output, this.options.policy)
    if (projection.artifact !== undefined)
      await this.options.artifactStore.put(projection.artifact.uri, projection.artifact.bytes)
    metadata = { ...metadata, a3s_tool_result_evidence: projection.evidence }
    this.budget.spend(projection.evidence.projected_bytes)
    return raw.exitCode === 0
      ? toolSuccess(raw.name, projection.output, metadata)
      : toolFailure(raw.name, projection.output, sanitized.errorKind!, metadata)
  }
}

function childOrigin(parentOrigin: Origin, parentName: string): Origin {
  if (
    (parentOrigin === 'host_direct' || parentOrigin === 'host_direct_nested') &&
    HOST_TRUSTED_PARENTS.has(parentName)
  ) {
    return 'host_direct_nested'
  }
  return 'nested'
}

/** A call's arguments as events show them (a tool may hide parts, e.g. signed URLs). */
export function eventArgs(tool: ToolSpec<Record<string, unknown>>, args: unknown): unknown {
  if (tool.redactArgs === undefined || typeof args !== 'object' || args === null) return args
  try {
    return tool.redactArgs(args as Record<string, unknown>)
  } catch {
    return args
  }
}

function validateTimeouts(value: KernelOptions['toolTimeoutMs']): void {
  const check = (v: unknown, what: string) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 86_400_000) {
      throw new IsoagentError(
        'invalid_argument',
        `${what} must be an integer number of ms in 1..86400000`,
      )
    }
  }
  if (value === undefined) return
  if (typeof value === 'number') return check(value, 'toolTimeoutMs')
  if (typeof value !== 'object' || value === null)
    throw new IsoagentError('invalid_argument', 'toolTimeoutMs must be a number or a record')
  for (const [k, v] of Object.entries(value)) check(v, `toolTimeoutMs.${k}`)
}

export type { SessionEvent }
