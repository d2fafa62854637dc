import type { ToolErrorKind } from '../tool-result.ts'
import type { KernelCall, Verdict } from './call.ts'
import { describeError } from './error-kind.ts'
import { DEFAULT_HOOK_TIMEOUT_MS, withDeadline } from './hooks.ts'
import type { KernelParts } from './kernel-parts.ts'

type Block = Omit<Extract<ToolErrorKind, { type: 'hook_denied' }>, 'type'>

/**
 * Step 3, the host's `preToolUse` hook (every origin): it sees a copy of the call and may block
 * it. A hook that throws or outlives `hookTimeoutMs` blocks too (fail closed), with a
 * `hook_error` event; every block is a `hook_denied` event and result.
 */
export function preHook(
  k: KernelParts,
  call: KernelCall,
): Verdict | undefined | Promise<Verdict | undefined> {
  const pre = k.options.hooks?.preToolUse
  if (pre === undefined) return undefined
  return withDeadline(
    () => pre(call.hookCall()),
    k.options.hookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
    'preToolUse hook',
  ).then(
    (decision): Verdict | undefined => {
      if (!decision || typeof decision !== 'object' || !('block' in decision)) return undefined
      const retryAfter = decision.retry_after_ms
      return blocked(k, call, {
        reason: String(decision.block),
        retryable: decision.retryable === true,
        retry_after_ms: typeof retryAfter === 'number' ? retryAfter : null,
      })
    },
    (error: unknown) => {
      const message = describeError(error)
      k.events.emit({
        type: 'hook_error',
        ...call.base,
        hook: 'preToolUse',
        message,
        timestamp: Date.now(),
      })
      const reason = `preToolUse hook failed (call refused): ${message}`
      return blocked(k, call, { reason, retryable: false, retry_after_ms: null })
    },
  )
}

function blocked(k: KernelParts, call: KernelCall, block: Block): Verdict {
  k.events.emit({
    type: 'hook_denied',
    ...call.base,
    hook: 'preToolUse',
    reason: block.reason,
    timestamp: Date.now(),
  })
  return call.reject(`${call.name} blocked by preToolUse hook: ${block.reason}`, {
    type: 'hook_denied',
    ...block,
  })
}
