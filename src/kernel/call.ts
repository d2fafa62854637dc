import { IsoagentError } from '../errors.ts'
import { toolFailure, type ToolErrorKind, type ToolResult } from '../tool-result.ts'
import type { CallState, EventHub } from './events.ts'
import type { ToolCall } from './hooks.ts'
import type { Origin } from './origin.ts'
import { onAbort } from './signal-fanout.ts'
import type { ToolSpec } from './tool-spec.ts'

/** A call currently known to the kernel. */
export interface ActiveTool {
  id: string
  name: string
  origin: Origin
  state: CallState
  startedAt: number
  parentCallId?: string
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

/** How a call ended, as its last `tool_state` says. */
export type EndState = 'completed' | 'rejected' | 'cancelled' | 'failed'

/**
 * What a step decided: the raw result to settle, the end state, and whether `postToolUse` hooks
 * see it (they see calls that ran, not refusals). A step that lets the call go on returns
 * `undefined` instead.
 */
export interface Verdict {
  result: ToolResult
  state: EndState
  hooks: boolean
}

/** The fields every event of a call carries (but its timestamp). */
export interface CallEventFields {
  toolName: string
  callId: string
  origin: Origin
  parentCallId?: string
}

let callCounter = 0
function newCallId(): string {
  callCounter = (callCounter + 1) % Number.MAX_SAFE_INTEGER
  return `call_${Date.now().toString(36)}_${callCounter.toString(36)}`
}

/**
 * One call on its way through the kernel's steps: its id, its `ActiveTool` entry and state
 * events, and its cancellation, which the caller's signal, the container's stop signal and the
 * session's closing signal trigger. Those links go through one fan-out listener per signal
 * ({@link onAbort}) and are cut by {@link KernelCall.unlink} when the call settles. The call's
 * own `AbortSignal` is made only when something reads {@link KernelCall.signal} (a tool, a
 * nested call, a confirmation): the kernel's steps listen through {@link KernelCall.onAbort},
 * and most calls never need a signal object (making one is a good part of a call's cost).
 */
export class KernelCall {
  readonly id = newCallId()
  readonly startedAt = Date.now()
  readonly name: string
  readonly origin: Origin
  readonly request: InvokeRequest
  readonly entry: ActiveTool
  readonly base: CallEventFields
  private controller: AbortController | undefined
  private abortReason: unknown
  private isAborted = false
  private readonly abortListeners = new Set<() => void>()
  /** The run, settled when the tool has really stopped (it may outlive the call's result). */
  settledLater: Promise<unknown> | undefined
  private admittedTool: ToolSpec<Record<string, unknown>> | undefined
  private readonly events: EventHub
  private readonly unlinks: (() => void)[] = []

  constructor(request: InvokeRequest, events: EventHub, closing: AbortSignal) {
    const { name, origin, parent, signal, stopSignal } = request
    this.name = name
    this.origin = origin
    this.request = request
    this.events = events
    const parentCallId = parent ? { parentCallId: parent.id } : {}
    this.base = { toolName: name, callId: this.id, origin, ...parentCallId }
    this.entry = { id: this.id, name, origin, state: 'created', startedAt: this.startedAt }
    Object.assign(this.entry, parentCallId)
    if (events.hasSubscribers)
      events.emit({ type: 'tool_state', ...this.base, state: 'created', timestamp: this.startedAt })
    const abort = () => this.abort(closing.reason ?? signal?.reason ?? stopSignal?.reason)
    if (closing.aborted || signal?.aborted || stopSignal?.aborted) {
      abort()
      return
    }
    this.unlinks.push(onAbort(closing, abort))
    if (signal !== undefined) this.unlinks.push(onAbort(signal, abort))
    if (stopSignal !== undefined) this.unlinks.push(onAbort(stopSignal, abort))
  }

  /** The call's signal, aborted with the call (with the same reason). */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController()
      if (this.isAborted) this.controller.abort(this.abortReason)
    }
    return this.controller.signal
  }

  get aborted(): boolean {
    return this.isAborted
  }

  /** Cancel the call with `reason` (the first reason wins): its signal, then its listeners. */
  abort(reason: unknown): void {
    if (this.isAborted) return
    this.isAborted = true
    this.abortReason = reason
    this.controller?.abort(reason)
    for (const listener of [...this.abortListeners]) {
      this.abortListeners.delete(listener)
      listener()
    }
  }

  /**
   * Call `listener` once when the call is cancelled (never when it already is: check
   * {@link KernelCall.aborted} first); returns the function that stops listening.
   */
  onAbort(listener: () => void): () => void {
    this.abortListeners.add(listener)
    return () => this.abortListeners.delete(listener)
  }

  /** The tool, once the admit step found it. */
  get tool(): ToolSpec<Record<string, unknown>> {
    if (this.admittedTool === undefined)
      throw new IsoagentError('invalid_argument', `${this.name} was not admitted`)
    return this.admittedTool
  }

  admit(tool: ToolSpec<Record<string, unknown>>): void {
    this.admittedTool = tool
  }

  /** The arguments as the tool takes them (schema-valid once admitted). */
  get args(): Record<string, unknown> {
    return this.request.args as Record<string, unknown>
  }

  setState(state: CallState): void {
    this.entry.state = state
    if (this.events.hasSubscribers)
      this.events.emit({ type: 'tool_state', ...this.base, state, timestamp: Date.now() })
  }

  /** A fresh copy of the call as hooks see it (a hook cannot change what runs). */
  hookCall(): ToolCall {
    const { callId, toolName, origin } = this.base
    const call: ToolCall = { callId, toolName, args: this.request.args, origin }
    if (this.base.parentCallId !== undefined) call.parentCallId = this.base.parentCallId
    return structuredClone(call)
  }

  /** Refused by a gate: never ran, no hooks. */
  reject(message: string, errorKind: ToolErrorKind): Verdict {
    return { result: toolFailure(this.name, message, errorKind), state: 'rejected', hooks: false }
  }

  /** Cancelled before it ran. */
  cancelled(when: string): Verdict {
    const result = toolFailure(this.name, `${this.name} was cancelled ${when}`, {
      type: 'cancelled',
      op: this.name,
    })
    return { result, state: 'cancelled', hooks: false }
  }

  /** Stop listening to the signals that cancel the call (once it has settled). */
  unlink(): void {
    for (const unlink of this.unlinks) unlink()
    this.unlinks.length = 0
  }
}
