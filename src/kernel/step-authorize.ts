import type { PermissionDeniedReason } from '../tool-result.ts'
import type { KernelCall, Verdict } from './call.ts'
import type { ConfirmationAnswer } from './confirmations.ts'
import { eventArgs } from './event-args.ts'
import type { KernelParts } from './kernel-parts.ts'
import type { Origin } from './origin.ts'

const MODEL_SIDE: ReadonlySet<Origin> = new Set(['agent', 'nested'])

/** Why a call must be confirmed: an `ask` rule (or the default decision), or the tool itself. */
interface Ask {
  rule?: string
  /** The tool's own reason (`ToolSpec.requiresConfirmation`). */
  tool?: string
}

/**
 * Step 2, authorize: permission rules for model-side calls (a `deny` refuses), then a human's
 * confirmation when a rule `ask`s or the tool requires it for these arguments (host-direct calls
 * skip the rules, not a tool's own requirement). Synchronous unless someone must be asked.
 */
export function authorize(
  k: KernelParts,
  call: KernelCall,
): Verdict | undefined | Promise<Verdict | undefined> {
  const mustConfirm = call.tool.requiresConfirmation?.(call.args)
  let ask: Ask | undefined = mustConfirm === undefined ? undefined : { tool: mustConfirm }
  if (MODEL_SIDE.has(call.origin)) {
    const verdict = k.permissions.decide(call.name, call.request.args)
    if (verdict.decision === 'deny') {
      const reason = verdict.rule
        ? `denied by permission rule "${verdict.rule}"`
        : 'denied by the default permission decision'
      return deny(k, call, verdict.rule, reason, `${call.name} ${reason}`, 'denied_by_rule')
    }
    if (verdict.decision === 'ask')
      ask = { ...ask, ...(verdict.rule ? { rule: verdict.rule } : {}) }
  }
  return ask === undefined ? undefined : confirm(k, call, ask)
}

/** Wait for the answer to the call's confirmation; anything but an approval ends the call. */
async function confirm(k: KernelParts, call: KernelCall, ask: Ask): Promise<Verdict | undefined> {
  const reason = ask.tool !== undefined ? { reason: ask.tool } : {}
  const answer = await k.confirmations.request(
    {
      callId: call.id,
      toolName: call.name,
      args: k.sanitizer.value(call.request.args),
      origin: call.origin,
      ...reason,
    },
    k.options.confirmationTimeoutMs ?? Number.POSITIVE_INFINITY,
    call.signal,
    (pending) =>
      k.events.emit({
        type: 'confirmation_required',
        ...call.base,
        confirmationId: pending.id,
        args: eventArgs(call.tool, call.request.args),
        ...reason,
        timestamp: Date.now(),
      }),
  )
  if (answer.outcome === 'approved') return undefined
  if (answer.outcome === 'cancelled') return call.cancelled('while waiting for confirmation')
  const { text, kind } = refusal(call.name, ask, answer)
  const output =
    answer.outcome === 'unavailable' ? `${call.name} ${text}` : `${call.name} was ${text}`
  return deny(k, call, ask.rule, text, output, kind)
}

/** What an unapproved confirmation says, and its documented reason. */
function refusal(
  name: string,
  ask: Ask,
  answer: ConfirmationAnswer,
): { text: string; kind: PermissionDeniedReason } {
  if (answer.outcome === 'refused')
    return { text: 'refused by the user', kind: 'confirmation_refused' }
  if (answer.outcome === 'timed_out')
    return { text: 'confirmation timed out; treated as refused', kind: 'confirmation_timed_out' }
  const why = answer.why ?? 'no one answers confirmations here'
  const cause =
    ask.tool !== undefined
      ? `the tool always asks for these arguments (${ask.tool}), whatever the permission rules`
      : ask.rule !== undefined
        ? `the permission rule "${ask.rule}" asks first`
        : 'the default permission decision is ask'
  const fix =
    ask.tool !== undefined
      ? 'call it from a client that can confirm'
      : ask.rule !== undefined
        ? `remove or narrow the ask rule "${ask.rule}" (ask wins over allow), or call it from a client that can confirm`
        : `add an allow rule for it (e.g. "${name}" in permissions.allow), or call it from a client that can confirm`
  return {
    text: `needs confirmation, and this client cannot be asked (${why}); nobody refused it: ${cause}. To run it, ${fix}`,
    kind: 'confirmation_unavailable',
  }
}

function deny(
  k: KernelParts,
  call: KernelCall,
  rule: string | undefined,
  reason: string,
  output: string,
  kind: PermissionDeniedReason,
): Verdict {
  k.events.emit({
    type: 'permission_denied',
    ...call.base,
    ...(rule ? { rule } : {}),
    reason,
    timestamp: Date.now(),
  })
  return call.reject(output, { type: 'permission_denied', message: reason, reason: kind })
}
