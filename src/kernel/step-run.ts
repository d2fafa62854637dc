import { IsoagentError } from '../errors.ts'
import { toolFailure, type ToolResult } from '../tool-result.ts'
import type { KernelCall, Verdict } from './call.ts'
import { describeError, errorKindOf } from './error-kind.ts'
import { eventArgs } from './event-args.ts'
import type { KernelParts } from './kernel-parts.ts'
import {
  CANCEL_GRACE_MS,
  DEFAULT_TOOL_TIMEOUT_MS,
  OWN_DEADLINE_MARGIN_MS,
} from './kernel-options.ts'
import { toolContext } from './tool-context.ts'
import type { ToolSpec } from './tool-spec.ts'

type Outcome = { kind: 'result'; result: ToolResult } | { kind: 'error'; error: unknown }
type Interruption = 'timeout' | 'abort'

/**
 * Step 5, run: wait for a slot (the tool's `max_parallelism`, the session's queue), run the tool
 * with its context under a deadline and the call's cancellation, and turn what happened into a
 * verdict. An interrupted tool gets `CANCEL_GRACE_MS` to stop; one that does not is reported
 * with `still_running`, and its slot is freed only when it really ends.
 */
export async function run(k: KernelParts, call: KernelCall): Promise<Verdict> {
  const tool = call.tool
  let release: () => void
  try {
    const nested = call.request.parent !== undefined
    release = await k.scheduler.slot(call.name, tool.scheduling.max_parallelism, call, nested)
  } catch {
    return call.cancelled('while queued')
  }
  if (call.aborted) {
    release()
    return call.cancelled('before it started')
  }
  call.setState('running')
  // Work kept for a next call may not survive a change of the workspace: what is kept is
  // dropped when such a call starts, and again when it has ended (a read-only call running
  // beside it may have kept work from before its writes).
  const changes = !tool.scheduling.read_only && tool.nesting?.container !== true
  if (changes) k.carryover.clear()
  if (k.events.hasSubscribers)
    k.events.emit({
      type: 'tool_start',
      ...call.base,
      args: eventArgs(tool, call.request.args),
      timestamp: Date.now(),
    })
  const context = toolContext(k, call)
  const running: Promise<Outcome> = Promise.resolve()
    .then(() => tool.run(call.args, context))
    .then(
      (result) => ({ kind: 'result', result }) as const,
      (error: unknown) => ({ kind: 'error', error }) as const,
    )
  call.settledLater = running.finally(() => {
    release()
    if (changes) k.carryover.clear()
  })
  const timeoutMs = deadlineOf(k, tool, call.args)
  const { outcome, interruption } = await raceDeadline(call, running, timeoutMs)
  context.flushOutput()
  return verdictOf(call, outcome, interruption, timeoutMs)
}

/** The call's deadline: the session's, else the tool's own default, stretched past its own deadline. */
function deadlineOf(
  k: KernelParts,
  tool: ToolSpec<Record<string, unknown>>,
  args: Record<string, unknown>,
): number {
  const t = k.options.toolTimeoutMs
  const base =
    typeof t === 'number' ? t : (t?.[tool.name] ?? tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS)
  const own = tool.ownDeadlineMs?.(args)
  return own === undefined ? base : Math.max(base, own + OWN_DEADLINE_MARGIN_MS)
}

/** The tool's outcome, or how it was interrupted and what it did in its grace time. */
async function raceDeadline(
  call: KernelCall,
  running: Promise<Outcome>,
  timeoutMs: number,
): Promise<{ outcome: Outcome; interruption?: Interruption }> {
  let timer: ReturnType<typeof setTimeout> | undefined
  let unlink: (() => void) | undefined
  const interrupted = new Promise<Interruption>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs)
    if (call.aborted) resolve('abort')
    else unlink = call.onAbort(() => resolve('abort'))
  })
  const first = await Promise.race([running, interrupted])
  clearTimeout(timer)
  unlink?.()
  if (first !== 'timeout' && first !== 'abort') return { outcome: first }
  if (first === 'timeout')
    call.abort(new IsoagentError('timeout', `${call.name} exceeded ${timeoutMs} ms`))
  let graceTimer: ReturnType<typeof setTimeout> | undefined
  const grace = await Promise.race([
    running,
    new Promise<undefined>((r) => {
      graceTimer = setTimeout(() => r(undefined), CANCEL_GRACE_MS)
    }),
  ])
  clearTimeout(graceTimer)
  // No outcome within the grace time: the tool is still running.
  return { outcome: grace ?? { kind: 'error', error: undefined }, interruption: first }
}

/** What the call's result and end state are, given how the tool ended (or did not). */
function verdictOf(
  call: KernelCall,
  outcome: Outcome,
  interruption: Interruption | undefined,
  timeoutMs: number,
): Verdict {
  const { name } = call
  const stillRunning =
    interruption !== undefined && outcome.kind === 'error' && outcome.error === undefined
  const ran = (result: ToolResult, state: Verdict['state']): Verdict => ({
    result,
    state,
    hooks: true,
  })
  if (outcome.kind === 'result' && outcome.result.exitCode === 0) {
    const result = outcome.result
    // The tool finished its work despite the interruption: report what happened.
    if (interruption !== undefined)
      result.metadata = { ...result.metadata, interrupted: interruption }
    return ran(result, 'completed')
  }
  // The tool stopped in time and reported its own cancellation (with what it had done).
  if (interruption === 'abort' && outcome.kind === 'result')
    if (outcome.result.errorKind?.type === 'cancelled') return ran(outcome.result, 'cancelled')
  const late = stillRunning ? '; it had not stopped yet, so a side effect may still complete' : ''
  const still = { still_running: stillRunning }
  if (interruption === 'timeout') {
    const message = `${name} timed out after ${timeoutMs} ms${late}`
    const kind = { type: 'timeout', op: name, duration_ms: timeoutMs } as const
    return ran(toolFailure(name, message, kind, still), 'failed')
  }
  if (interruption === 'abort') {
    const message = `${name} was cancelled while running${late}`
    return ran(toolFailure(name, message, { type: 'cancelled', op: name }, still), 'cancelled')
  }
  if (outcome.kind === 'result') return ran(outcome.result, 'failed')
  const kind = errorKindOf(outcome.error, name)
  const message = `${name} failed: ${describeError(outcome.error)}`
  return ran(toolFailure(name, message, kind), kind.type === 'cancelled' ? 'cancelled' : 'failed')
}
