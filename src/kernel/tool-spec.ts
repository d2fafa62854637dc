import type { ToolCarryover } from './carryover.ts'
import type { ReadOnlyMount } from './read-only-mount.ts'
import type { ToolResult } from '../tool-result.ts'
import type { WorkspaceCapabilities } from '../workspace/capabilities.ts'
import type { WorkspacePath } from '../workspace/workspace-path.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'

/** A JSON Schema object, as handed to models and to the validator. */
export type JsonSchema = { [key: string]: unknown }

/** Scheduling facts a tool declares; the kernel queues and fans out by them. */
export interface ToolScheduling {
  read_only: boolean
  idempotent: boolean
  resumable: boolean
  cancellation_safe: boolean
  supports_pagination: boolean
  /** Most concurrent calls of this tool in one session. */
  max_parallelism: number
  output_kind: 'text' | 'json' | 'binary_ref'
}

/**
 * How a tool runs other tools through {@link ToolContext.invoke}. The kernel's nesting rules
 * follow from these flags, so a tool that runs others declares them instead of being named in
 * the kernel. A tool that runs no other tool omits {@link ToolSpec.nesting}.
 */
export interface ToolNesting {
  /**
   * It only runs other tools (`batch`, `program`): each child passes every gate on its own;
   * under a host-direct call its children keep the host's trust (`host_direct_nested`), under
   * any other they are governed `nested` calls; and it does not change the workspace itself, so
   * starting it keeps the session's carryover (its children that change the workspace drop it).
   */
  container?: boolean
  /** It may not appear anywhere below itself (`batch` inside `batch`). */
  nonReentrant?: boolean
  /** It runs sub-agents (`task`): no tool that runs sub-agents may appear below one that does. */
  runsAgents?: boolean
}

/** What a running tool gets from the kernel. */
export interface ToolContext {
  workspace: WorkspaceServices
  signal: AbortSignal
  callId: string
  /** Normalise and contain a caller-supplied path (throws `IsoagentError`). */
  path(input: string): WorkspacePath
  /**
   * Run another tool as a child of this call, through every gate of the kernel. Children of a
   * host-direct `batch`/`program` keep host trust; all others are governed `nested` calls.
   * `signal` cancels the child sooner than this call's own cancellation (which always does).
   */
  invoke(
    name: string,
    args: unknown,
    options?: { signal?: AbortSignal; onOutput?: (delta: string) => void },
  ): Promise<ToolResult>
  /** Scheduling facts of a tool this session offers (undefined when it offers no such tool). */
  scheduling(name: string): ToolScheduling | undefined
  /**
   * Decide the permission rules again for this call with arguments that became precise only
   * while it ran (`download` into a folder, once the server named the file), before any side
   * effect: resolves when allowed; a deny rule rejects with `permission_denied`; an ask rule
   * raises a new `confirmation_required` with these arguments and waits (refused or timed out:
   * `permission_denied`; cancelled: `cancelled`). Host-direct calls always pass, as at admission.
   */
  authorize(args: Record<string, unknown>): Promise<void>
  /** Work kept between calls of this session (dropped when the workspace may change). */
  carryover: ToolCarryover
  /** Stream part of the output while running (`tool_output_delta` events). */
  emitOutput(delta: string): void
  /**
   * Largest output (UTF-8 bytes) the session's projection passes unchanged. Tools that cut
   * their own output to a head and a tail fit in it, so the projection never cuts their tail.
   */
  outputLimitBytes: number
  /**
   * The session's read-only mounts by scheme with its `://` (`skill://` when it has skills):
   * paths in a mounted scheme name a mount's files, not the workspace's.
   */
  mounts: ReadonlyMap<string, ReadOnlyMount>
}

/** One tool: its model-facing contract and its implementation. */
export interface ToolSpec<Args = never> {
  name: string
  description: string
  /** Closed JSON Schema (`additionalProperties: false`, no top-level `oneOf`). */
  parameters: JsonSchema
  /** A hidden alias: callable by name, never listed in `toolDefinitions()`. */
  hidden?: boolean
  /** Whether a workspace with these capabilities can serve the tool. */
  available(capabilities: WorkspaceCapabilities): boolean
  scheduling: ToolScheduling
  /** Argument that permission rules like `tool(glob)` match against. */
  primaryArgument?: string
  /**
   * Arguments that name workspace paths: each one present is parsed and contained in the
   * workspace before the tool runs (refused with `permission_denied` or `invalid_argument`
   * otherwise). `name` is a top-level string argument, `name[].key` the `key` of each object of
   * an array argument. Omitted: `file_path`, `path` and `files[].path`
   * ({@link DEFAULT_PATH_ARGUMENTS}); `[]` for a tool without workspace paths.
   */
  pathArguments?: readonly string[]
  /**
   * The tool's default deadline (ms), used when the session's `toolTimeoutMs` sets none for it;
   * without it the kernel's `DEFAULT_TOOL_TIMEOUT_MS` (120 s) applies.
   */
  timeoutMs?: number
  /** How it runs other tools, when it does. */
  nesting?: ToolNesting
  /**
   * Validate arguments (returns a message, or undefined when valid). Built-in tools omit it and
   * use their precompiled schema validators.
   */
  validate?(args: unknown): string | undefined
  /**
   * A reason when these schema-valid arguments always need a human's approval, whatever the
   * origin and the permission rules: the call raises `confirmation_required` and waits for
   * `confirmToolUse`. (Deny rules still refuse model-side calls first.)
   */
  requiresConfirmation?(args: Args): string | undefined
  /**
   * The deadline (ms) the tool enforces itself for these schema-valid arguments, returning a
   * proper result when it passes. The kernel's deadline for the call is then at least this plus
   * `OWN_DEADLINE_MARGIN_MS`, so the tool's own deadline fires first.
   */
  ownDeadlineMs?(args: Args): number | undefined
  /** Let go of what the tool holds for its session (a shared browser, ...); on session close. */
  close?(): Promise<void>
  /** The arguments as session events show them, for tools whose arguments may carry secrets. */
  redactArgs?(args: Args): Args
  /**
   * How the kernel redacts what the tool streams with `emitOutput`: `text` (the default) is one
   * text cut anywhere, so a tail that may hold part of a secret is held back until the next delta
   * or the end of the call (deltas may be joined); `messages` are whole documents each (e.g.
   * `generate_object`'s JSON partials), each sanitised on its own and passed on as it is.
   */
  streamedOutput?: 'text' | 'messages'
  /** Run with schema-valid `args`; may throw `IsoagentError`, which the kernel types. */
  run(args: Args, context: ToolContext): Promise<ToolResult>
}

/** Path arguments of a tool that declares none: `file_path`, `path` and each `files[].path`. */
export const DEFAULT_PATH_ARGUMENTS: readonly string[] = Object.freeze([
  'file_path',
  'path',
  'files[].path',
])

/** Scheduling of a tool that only reads. */
export const READ_ONLY: ToolScheduling = {
  read_only: true,
  idempotent: true,
  resumable: true,
  cancellation_safe: true,
  supports_pagination: true,
  max_parallelism: 16,
  output_kind: 'text',
}

/** Scheduling of a tool that changes the workspace. */
export const MUTATING: ToolScheduling = {
  read_only: false,
  idempotent: false,
  resumable: false,
  cancellation_safe: false,
  supports_pagination: false,
  max_parallelism: 1,
  output_kind: 'text',
}
