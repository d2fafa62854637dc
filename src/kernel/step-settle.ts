import { projectOutput } from '../projection/project.ts'
import { utf8Length } from '../text/bytes.ts'
import { toolFailure, toolSuccess, type ToolResult } from '../tool-result.ts'
import type { KernelCall, Verdict } from './call.ts'
import { describeError } from './error-kind.ts'
import { DEFAULT_HOOK_TIMEOUT_MS, withDeadline } from './hooks.ts'
import type { KernelParts } from './kernel-parts.ts'

/**
 * Step 6, settle every call, refused or run: sanitise output and metadata, let the
 * `postToolUse` hook observe a call that ran, project the output under the session's policy
 * (storing the artifact of a lossy result), count the bytes against the budget, then the end
 * state and `tool_end`.
 */
export async function settle(
  k: KernelParts,
  call: KernelCall,
  verdict: Verdict,
): Promise<ToolResult> {
  const raw = verdict.result
  const output = k.sanitizer.text(raw.output)
  let metadata = raw.metadata === undefined ? undefined : k.sanitizer.value(raw.metadata)
  const sanitized =
    raw.exitCode === 0
      ? toolSuccess(raw.name, output, metadata)
      : toolFailure(raw.name, output, k.sanitizer.value(raw.errorKind!), metadata)
  if (verdict.hooks) {
    const failure = await postHook(k, call, sanitized)
    if (failure !== undefined) metadata = { ...metadata, post_hook_error: failure }
  }
  const projection = await projectOutput(raw.name, output, k.options.policy)
  if (projection.artifact !== undefined)
    await k.options.artifactStore.put(projection.artifact.uri, projection.artifact.bytes)
  metadata = { ...metadata, a3s_tool_result_evidence: projection.evidence }
  k.budget.spend(projection.evidence.projected_bytes)
  const result =
    raw.exitCode === 0
      ? toolSuccess(raw.name, projection.output, metadata)
      : toolFailure(raw.name, projection.output, sanitized.errorKind!, metadata)
  call.setState(verdict.state)
  if (k.events.hasSubscribers) {
    k.events.emit({
      type: 'tool_end',
      ...call.base,
      state: verdict.state,
      exitCode: result.exitCode,
      ...(result.errorKind ? { errorKind: result.errorKind } : {}),
      durationMs: Date.now() - call.startedAt,
      outputBytes: utf8Length(result.output),
      timestamp: Date.now(),
    })
  }
  return result
}

/** Run the `postToolUse` hook on a copy of the result; its failure's message, if it failed. */
async function postHook(
  k: KernelParts,
  call: KernelCall,
  sanitized: ToolResult,
): Promise<string | undefined> {
  const post = k.options.hooks?.postToolUse
  if (post === undefined) return undefined
  try {
    await withDeadline(
      () => post(call.hookCall(), structuredClone({ ...sanitized })),
      k.options.hookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
      'postToolUse hook',
    )
    return undefined
  } catch (error) {
    const message = k.sanitizer.text(describeError(error))
    k.events.emit({
      type: 'hook_error',
      ...call.base,
      hook: 'postToolUse',
      message,
      timestamp: Date.now(),
    })
    return message
  }
}
