import type { ToolResult } from '../tool-result.ts'
import type { Origin } from './origin.ts'

/** A call as hooks see it. */
export interface ToolCall {
  callId: string
  toolName: string
  args: unknown
  origin: Origin
  parentCallId?: string
}

/** What a `preToolUse` hook returns to stop a call. */
export interface HookBlock {
  block: string
  retryable?: boolean
  retry_after_ms?: number
}

/**
 * Host hooks around every call (all origins). A `preToolUse` hook may block; one that throws or
 * does not settle within `hookTimeoutMs` blocks too (fail closed). `postToolUse` observes the
 * result; its failures are reported as `hook_error` events and in `metadata.post_hook_error`.
 */
export interface ToolHooks {
  preToolUse?(call: ToolCall): HookBlock | void | undefined | Promise<HookBlock | void | undefined>
  postToolUse?(call: ToolCall, result: ToolResult): void | Promise<void>
}

/** Default bound on one hook invocation. */
export const DEFAULT_HOOK_TIMEOUT_MS = 5000

/** Run `fn` with a deadline; rejects with a readable message on timeout. */
export async function withDeadline<T>(
  fn: () => T | Promise<T>,
  ms: number,
  what: string,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    return await Promise.race([
      Promise.resolve().then(fn),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms)
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}
