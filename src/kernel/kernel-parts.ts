import type { ToolResult } from '../tool-result.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'
import type { Budget } from './budget.ts'
import type { InvokeRequest } from './call.ts'
import type { Carryover } from './carryover.ts'
import type { Confirmations } from './confirmations.ts'
import type { EventHub } from './events.ts'
import type { KernelOptions } from './kernel-options.ts'
import type { PermissionPolicy } from './permissions.ts'
import type { ReadOnlyMount } from './read-only-mount.ts'
import type { Sanitizer } from './sanitize.ts'
import type { Scheduler } from './scheduler.ts'
import type { ToolSpec } from './tool-spec.ts'

/**
 * What the steps of a call (`step-*.ts`) work with: one per kernel, built by its constructor.
 * Steps are plain functions of these parts and the call, so each can be read on its own.
 */
export interface KernelParts {
  readonly workspace: WorkspaceServices
  readonly options: KernelOptions
  readonly tools: ReadonlyMap<string, ToolSpec<Record<string, unknown>>>
  readonly events: EventHub
  readonly budget: Budget
  readonly permissions: PermissionPolicy
  readonly confirmations: Confirmations
  readonly sanitizer: Sanitizer
  readonly scheduler: Scheduler
  readonly carryover: Carryover
  /** The session's closing signal: aborting it cancels every call. */
  readonly closing: AbortSignal
  /** The root paths are contained in (the workspace's local root, else `/`). */
  readonly root: string
  /** The session's read-only mounts by scheme (`skill://`), see `Kernel.mount`. */
  readonly mounts: Map<string, ReadOnlyMount>
  /** Run a call from the start (nested calls re-enter here). */
  invoke(request: InvokeRequest): Promise<ToolResult>
}
