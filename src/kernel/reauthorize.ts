import { IsoagentError } from '../errors.ts'
import type { Confirmations } from './confirmations.ts'
import type { EventHub } from './events.ts'
import type { Origin } from './origin.ts'
import type { PermissionPolicy } from './permissions.ts'

/** Origins whose calls the permission rules govern (host-direct calls are trusted). */
const GOVERNED: ReadonlySet<Origin> = new Set(['agent', 'nested'])

/** What {@link reauthorize} needs of the kernel for one running call. */
export interface ReauthorizeScope {
  policy: PermissionPolicy
  confirmations: Confirmations
  events: EventHub
  /** The call's event fields. */
  base: { toolName: string; callId: string; origin: Origin; parentCallId?: string }
  /** The call's signal: cancelling it cancels a pending confirmation. */
  signal: AbortSignal
  /** How long an `ask` waits (`Number.POSITIVE_INFINITY`: no limit). */
  confirmationTimeoutMs: number
  /** The arguments as a pending confirmation lists them (sanitised). */
  pendingArgs(args: unknown): unknown
  /** The arguments as events show them (the tool's own redaction). */
  eventArgs(args: unknown): unknown
}

function denied(scope: ReauthorizeScope, reason: string, rule: string | undefined): IsoagentError {
  scope.events.emit({
    type: 'permission_denied',
    ...scope.base,
    ...(rule !== undefined ? { rule } : {}),
    reason,
    timestamp: Date.now(),
  })
  return new IsoagentError('permission_denied', reason, {
    data: rule !== undefined ? { rule } : {},
  })
}

/**
 * Decide the permission rules again for a running call whose arguments became precise only
 * while it ran — `download` into a folder once the server has named the file — before it writes
 * anything. The same gate as at admission: host-direct calls pass; a deny rule throws
 * `permission_denied` (and emits `permission_denied`); an ask rule raises a new
 * `confirmation_required` carrying the precise arguments and waits for the answer (a refusal or a
 * timeout throws `permission_denied`, a cancellation `cancelled`).
 */
export async function reauthorize(scope: ReauthorizeScope, args: unknown): Promise<void> {
  if (!GOVERNED.has(scope.base.origin)) return
  const verdict = scope.policy.decide(scope.base.toolName, args)
  if (verdict.decision === 'allow') return
  if (verdict.decision === 'deny') {
    const reason =
      verdict.rule !== undefined
        ? `denied by permission rule "${verdict.rule}"`
        : 'denied by the default permission decision'
    throw denied(scope, reason, verdict.rule)
  }
  const outcome = await scope.confirmations.request(
    {
      callId: scope.base.callId,
      toolName: scope.base.toolName,
      args: scope.pendingArgs(args),
      origin: scope.base.origin,
    },
    scope.confirmationTimeoutMs,
    scope.signal,
    (pending) =>
      scope.events.emit({
        type: 'confirmation_required',
        ...scope.base,
        confirmationId: pending.id,
        args: scope.eventArgs(args),
        timestamp: Date.now(),
      }),
  )
  if (outcome.outcome === 'approved') return
  if (outcome.outcome === 'cancelled')
    throw new IsoagentError('cancelled', 'cancelled while waiting for confirmation')
  const rule = verdict.rule
  const text =
    outcome.outcome === 'refused'
      ? 'refused by the user'
      : outcome.outcome === 'timed_out'
        ? 'confirmation timed out; treated as refused'
        : `needs confirmation, and this client cannot be asked (${outcome.why ?? 'no one answers confirmations here'}); nobody refused it: ${rule !== undefined ? `the permission rule "${rule}" asks first` : 'the default permission decision is ask'} for the final path. To run it, ${rule !== undefined ? `remove or narrow the ask rule "${rule}"` : 'add an allow rule for it'}, or call it from a client that can confirm`
  throw denied(scope, text, rule)
}
