import { IsoagentError } from '../errors.ts'
import { errorCodeOf } from '../kernel/error-kind.ts'
import type { PendingConfirmation } from '../kernel/confirmations.ts'
import type { SessionEvent } from '../kernel/events.ts'
import type { ActiveTool, Kernel } from '../kernel/kernel.ts'
import type { ToolResultTransformPolicyV1 } from '../projection/policy.ts'
import type { ToolResult } from '../tool-result.ts'
import type { JsonSchema } from '../kernel/tool-spec.ts'
import type { ModelMessage } from '../llm/language-model.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'
import { SNAPSHOT_SCHEMA, type SessionSnapshot } from './snapshot.ts'
import type { WorkspaceRetrieval } from '../retrieval/workspace-retrieval.ts'
import type { RetrievalStatus } from '../retrieval/retrieval-status.ts'
import type { SkillRegistry } from '../skills/skill-registry.ts'
import type { Skill, SkillEntry, SkillsReport } from '../skills/skill.ts'
import type { AgentEvent, AgentRunResult } from '../agent/agent-events.ts'
import type { BackgroundTaskInfo, BackgroundTasks } from '../agent/background-tasks.ts'
import type { Conversation, TurnOptions } from '../agent/conversation.ts'
import type { TaskAgent } from '../tools/task/profiles.ts'
import { toolFailure } from '../tool-result.ts'
import { workflowHostOf } from '../tools/dynamic-workflow/dynamic-workflow.ts'
import { workflowHandle, type WorkflowHandle } from './workflow-handle.ts'
import type { McpServerConfig } from '../mcp-client/mcp-config.ts'
import type { McpAddOptions, McpManager, McpServerStatus } from '../mcp-client/mcp-manager.ts'
import {
  checkVerifyInput,
  throwIfBashFailed,
  verifyResult,
  type VerifyCommand,
  type VerifyReport,
} from './verify.ts'

/** A tool as offered to a model. */
export interface ToolDefinition {
  name: string
  description: string
  parameters: JsonSchema
}

/** Options of a call. */
export interface CallOptions {
  signal?: AbortSignal
}

/** Options of {@link Session.grep}: the `search` tool's grep arguments. */
export interface GrepOptions {
  path?: string
  include?: string
  context?: number
  case_sensitive?: boolean
  output_mode?: 'content' | 'files_with_matches' | 'count' | 'summary'
  limit?: number
  cursor?: string
  sort?: 'path' | 'backend'
}

/** Options of {@link Session.bash}: the `bash` tool's optional arguments, and a signal. */
export interface BashOptions {
  /** Deadline in ms (default 120000, at least 1000). */
  timeout?: number
  sandbox_permissions?: 'use_default' | 'require_escalated'
  justification?: string
  signal?: AbortSignal
}

/** Options of {@link Session.program}: the `program` tool's arguments in SDK spelling. */
export interface ProgramOptions {
  /** The program: `export default async function run(ctx, inputs) { ... }` or a function body. */
  source?: string
  /** A `.js`/`.mjs` file of the workspace holding the program (instead of `source`). */
  path?: string
  /** Any JSON value, handed to the program as a copy. */
  inputs?: unknown
  /** Only these tools may be called from the program (default: all but `program`). */
  allowedTools?: string[]
  limits?: { timeoutMs?: number; maxToolCalls?: number; maxOutputBytes?: number }
  signal?: AbortSignal
}

/** Options of {@link Session.editFile}. */
export interface EditOptions {
  replace_all?: boolean
  dry_run?: boolean
  max_replacements?: number
  expected_replacements?: number
}

/** One sub-agent task of {@link Session.task} and {@link Session.tasks}. */
export interface TaskRequest {
  agent: TaskAgent
  description: string
  prompt: string
  max_steps?: number
  output_schema?: JsonSchema
  background?: boolean
}

/** Options of {@link Session.tasks}. */
export interface TasksOptions {
  allow_partial_failure?: boolean
  min_success_count?: number
  signal?: AbortSignal
}

/** What a session holds for its model: the conversation and the background tasks. */
export interface SessionAgentParts {
  conversation: Conversation
  background: BackgroundTasks
  hasModel: boolean
  /** The session's skills (absent when the session turned skills off). */
  skills?: SkillRegistry
  /** The session's MCP servers. */
  mcp?: McpManager
  /** The session's semantic retrieval (absent unless `SessionOptions.retrieval` was given). */
  retrieval?: WorkspaceRetrieval
}

/** Throw for a failed result: the code follows its `errorKind` (see {@link errorCodeOf}). */
function throwIfFailed(result: ToolResult): ToolResult {
  if (result.exitCode !== 0) {
    throw new IsoagentError(errorCodeOf(result.errorKind), result.output, {
      data: { errorKind: result.errorKind },
    })
  }
  return result
}

/**
 * A tool surface over one workspace. Tools are registered from the workspace's capabilities;
 * every call goes through the session's kernel. `session.tool` and the typed helpers are
 * host-direct calls (no permission rules or confirmation; hooks, budget, deadlines, cancellation,
 * sanitisation, projection and path checks still apply); `governedTool` is a model-side call.
 */
export class Session {
  readonly workspace: WorkspaceServices
  private readonly kernel: Kernel
  private readonly agent: SessionAgentParts

  /** @internal Use `agent.session(workspace, options)`. */
  constructor(kernel: Kernel, agent: SessionAgentParts) {
    this.kernel = kernel
    this.workspace = kernel.workspace
    this.agent = agent
  }

  /** Whether a turn of the agent loop is running now. */
  get turnRunning(): boolean {
    return this.agent.conversation.busy
  }

  /**
   * The semantic retrieval index's progress and size (phase building | ready | degraded |
   * closed), or undefined when the session did not enable retrieval.
   */
  retrievalStatus(): RetrievalStatus | undefined {
    return this.agent.retrieval?.status()
  }

  /** The session's skills (name, description, kind, source) and the files skipped, with why. */
  skills(): SkillsReport {
    return this.agent.skills?.report() ?? { skills: [], diagnostics: [] }
  }

  /**
   * One skill as the registry holds it (its `loadBody()` reads the body and lists the bundled
   * files); undefined when there is none of that name or skills are off.
   */
  skill(name: string): SkillEntry | undefined {
    return this.agent.skills?.get(name)
  }

  /**
   * Add a live skill; it shadows a skill of the same name until removed. Throws `IsoagentError`
   * `invalid_argument` for a skill that breaks a rule, `unsupported` when skills are off.
   */
  addSkill(skill: Skill): void {
    if (this.agent.skills === undefined)
      throw new IsoagentError('unsupported', 'this session was opened with skills: false')
    this.agent.skills.add(skill)
  }

  /** Remove a skill (a live one restores what it shadowed); whether there was one. */
  removeSkill(name: string): boolean {
    return this.agent.skills?.remove(name) ?? false
  }

  /**
   * Call `listener` after every change of the session's skills (an add or a remove). Returns the
   * function that unsubscribes; a session without skills never calls it.
   */
  onSkillsChange(listener: () => void): () => void {
    return this.agent.skills?.onChange(listener) ?? (() => undefined)
  }

  /** Whether the session's agent has a model (send, stream and task need one). */
  get hasModel(): boolean {
    return this.agent.hasModel
  }

  /**
   * Run one turn of the agent loop: the prompt joins the conversation, the model is asked and
   * every tool call it makes goes through the kernel as an `agent` call (permissions,
   * confirmation, hooks, budget, projection), until it answers without tools or `maxSteps`.
   * Throws `IsoagentError`: `unsupported` without a model, `invalid_argument` for a bad prompt
   * or while another turn runs, the model's failure code (`transport`, `rate_limited`,
   * `timeout`, ...), `cancelled` when `signal` aborts (running tools settle first).
   */
  send(prompt: string, options: TurnOptions = {}): Promise<AgentRunResult> {
    try {
      return this.agent.conversation.send(prompt, options)
    } catch (error) {
      return Promise.reject(error)
    }
  }

  /**
   * {@link Session.send} as an async iterable of {@link AgentEvent}s, ending with `finish`.
   * Throws at once when the turn cannot start; stopping the iteration early cancels the turn.
   */
  stream(prompt: string, options: TurnOptions = {}): AsyncIterableIterator<AgentEvent> {
    return this.agent.conversation.stream(prompt, options)
  }

  /** The conversation so far (a copy), as the model sees it. */
  messages(): ModelMessage[] {
    return structuredClone(this.agent.conversation.messages)
  }

  /**
   * Run one sub-agent (`task` with one item, host-direct). Never throws: without a model the
   * result is a typed `unsupported` failure. With `background: true` it answers at once with
   * `metadata.task_id`; collect the result with {@link Session.waitForTask}.
   */
  task(request: TaskRequest, options: { signal?: AbortSignal } = {}): Promise<ToolResult> {
    return this.tasks([request], options)
  }

  /**
   * Run sub-agents (`task`, host-direct): concurrently unless a `general` one is among them;
   * `metadata.results[i]` holds each one's `{ status, text, object?, steps, usage }`.
   */
  tasks(requests: TaskRequest[], options: TasksOptions = {}): Promise<ToolResult> {
    const { signal, ...rest } = options ?? {}
    if (!this.agent.hasModel) {
      const message = 'this session has no model: create its agent with Agent.create({ model })'
      return Promise.resolve(toolFailure('task', message, { type: 'unsupported', message }))
    }
    return this.tool('task', { tasks: requests, ...rest }, signal ? { signal } : {})
  }

  /**
   * Control of `dynamic_workflow` run `runId`: inspect, history, cancel, drive. Throws
   * `IsoagentError` `unsupported` when the session was not created with `workflows`.
   */
  workflow(runId: string): WorkflowHandle {
    const host = workflowHostOf(this.kernel.list().find((t) => t.name === 'dynamic_workflow'))
    if (host === undefined)
      throw new IsoagentError(
        'unsupported',
        'this session has no dynamic_workflow: create it with the workflows option',
      )
    return workflowHandle(runId, host, (args, signal) =>
      this.tool('dynamic_workflow', args, signal ? { signal } : {}),
    )
  }

  /** Background tasks of this session (running, and settled ones not yet pruned). */
  backgroundTasks(): BackgroundTaskInfo[] {
    return this.agent.background.list()
  }

  /**
   * The result of a background task once it settles. Throws `IsoagentError` `not_found` for an
   * unknown id, `cancelled` when `signal` aborts the wait (the task keeps running).
   */
  waitForTask(id: string, options: { signal?: AbortSignal } = {}): Promise<ToolResult> {
    return this.agent.background.wait(id, options.signal)
  }

  /** Cancel a running background task; false when it is unknown or already settled. */
  cancelTask(id: string): boolean {
    return this.agent.background.cancel(id)
  }

  /** The pinned `a3s.code.tool-result-transform-policy.v1`. */
  get toolResultTransformPolicy(): ToolResultTransformPolicyV1 {
    return { ...this.kernel.options.policy }
  }

  /** Names of the tools this session offers, in registration order. */
  toolNames(): string[] {
    return this.kernel.list().map((t) => t.name)
  }

  /** Model-facing definitions: closed JSON Schemas, no top-level oneOf. */
  toolDefinitions(): ToolDefinition[] {
    return this.kernel.list().map((t) => ({
      name: t.name,
      description: t.description,
      parameters: structuredClone(t.parameters),
    }))
  }

  /** Calls the kernel knows of now, with their lifecycle state. */
  activeTools(): ActiveTool[] {
    return this.kernel.activeTools()
  }

  /** Call a tool as the host (trusted control plane). Never throws: failures are results. */
  tool(name: string, args: unknown, options: CallOptions = {}): Promise<ToolResult> {
    return this.kernel.invoke({ name, args, origin: 'host_direct', signal: options.signal })
  }

  /** Call a tool under the full model-side policy (permissions, confirmation, hooks, budget). */
  governedTool(name: string, args: unknown, options: CallOptions = {}): Promise<ToolResult> {
    return this.kernel.invoke({ name, args, origin: 'agent', signal: options.signal })
  }

  /**
   * Session events from now on, as an async iterable. A slow consumer never blocks a call: its
   * buffer is bounded and the oldest events are dropped and counted (`events_dropped`).
   */
  events(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<SessionEvent> {
    return this.kernel.events.subscribe(options.signal)
  }

  /** Calls waiting for a human answer. */
  pendingConfirmations(): PendingConfirmation[] {
    return this.kernel.pendingConfirmations()
  }

  /**
   * Approve or refuse a pending call. Throws `IsoagentError` `not_found` for an unknown id and
   * `invalid_argument` for one already answered, timed out or cancelled.
   */
  confirmToolUse(id: string, approved: boolean): void {
    this.kernel.confirm(id, approved)
  }

  /**
   * Settle a pending call that nobody can be asked about, because whoever answers for this
   * session cannot ask a human (an MCP client without elicitation, a front end with no one to
   * confirm). `why` says who cannot ask and why. The call fails with `permission_denied`,
   * `errorKind.reason: 'confirmation_unavailable'`, and its message says so and how to allow the
   * call instead; it is not reported as a refusal. Throws like {@link Session.confirmToolUse}.
   */
  cannotConfirm(id: string, why: string): void {
    this.kernel.cannotConfirm(id, why)
  }

  /** The full original of a projected result (`a3s://tool-output/...`), if still stored. */
  getArtifact(uri: string): Promise<Uint8Array | undefined> {
    return this.kernel.options.artifactStore.get(uri)
  }

  /** Plain-JSON state to resume this session elsewhere with `agent.resumeSession`. */
  snapshot(): SessionSnapshot {
    const o = this.kernel.options
    return structuredClone({
      schema: SNAPSHOT_SCHEMA,
      created_at: new Date().toISOString(),
      workspace: this.workspace.descriptor,
      tool_result_transform_policy: o.policy,
      permissions: o.permissions ?? {},
      budget: { limits: this.kernel.budget.limits, used: this.kernel.budget.used },
      tool_timeout_ms: o.toolTimeoutMs ?? null,
      tools: this.toolNames(),
      ...(this.agent.conversation.messages.length > 0
        ? { conversation: { messages: this.agent.conversation.messages } }
        : {}),
    })
  }

  /**
   * The `read` tool's output for `path` (numbered lines). Throws `IsoagentError` when the read
   * fails: its `code` follows the result's `errorKind` (`not_found`, `permission_denied`,
   * `unsupported`, `timeout`, ...; see {@link errorCodeOf}), which is in `data.errorKind`.
   */
  async readFile(path: string, options: { offset?: number; limit?: number } = {}): Promise<string> {
    return throwIfFailed(await this.tool('read', { file_path: path, ...options })).output
  }

  /** Overwrite (or create) a text file. */
  writeFile(path: string, content: string): Promise<ToolResult> {
    return this.tool('write', { file_path: path, content })
  }

  /** List a directory (the root by default). */
  ls(path?: string): Promise<ToolResult> {
    return this.tool('ls', path === undefined ? {} : { path })
  }

  /** Replace `oldString` with `newString` in a file. */
  editFile(
    path: string,
    oldString: string,
    newString: string,
    options: EditOptions = {},
  ): Promise<ToolResult> {
    return this.tool('edit', {
      file_path: path,
      old_string: oldString,
      new_string: newString,
      ...options,
    })
  }

  /** Apply a unified diff to a file. */
  patchFile(path: string, diff: string): Promise<ToolResult> {
    return this.tool('patch', { file_path: path, diff })
  }

  /**
   * Every path matching `pattern` (search mode glob, all pages), in path order. Throws
   * `IsoagentError` when the search fails, coded as {@link Session.readFile} says.
   */
  async glob(
    pattern: string,
    options: { path?: string; include?: string } = {},
  ): Promise<string[]> {
    const paths: string[] = []
    let cursor: string | undefined
    do {
      const result = throwIfFailed(
        await this.tool('search', {
          mode: 'glob',
          query: pattern,
          ...options,
          limit: 1000,
          ...(cursor ? { cursor } : {}),
        }),
      )
      const page = (result.metadata?.paths as string[] | undefined) ?? []
      paths.push(...page)
      cursor = (result.metadata?.next_cursor as string | null | undefined) ?? undefined
    } while (cursor !== undefined)
    return paths
  }

  /**
   * The `search` tool's grep output for `pattern` (one page). Throws `IsoagentError` on failure,
   * coded as {@link Session.readFile} says.
   */
  async grep(pattern: string, options: GrepOptions = {}): Promise<string> {
    return throwIfFailed(await this.tool('search', { mode: 'grep', query: pattern, ...options }))
      .output
  }

  /**
   * Run `command` with the `bash` tool (host-direct) and return its output. Throws
   * `IsoagentError` when the call fails (non-zero exit: code `transport`, the result's `errorKind`; deadline: `timeout`; cancel:
   * `cancelled`; bad arguments: `invalid_argument`), with `errorKind`, `exitCode` and the whole
   * `output` in `data`.
   */
  async bash(command: string, options: BashOptions = {}): Promise<string> {
    const { signal, ...args } = options
    const result = await this.tool('bash', { command, ...args }, signal ? { signal } : {})
    return throwIfBashFailed(result).output
  }

  /**
   * Run each check through the governed `bash` path (permission rules, confirmation, hooks and
   * budget apply, as for a model's call), one after another, and report. `passed` is false when
   * any required check did not exit 0. Throws `IsoagentError` `invalid_argument` for malformed
   * input (before running anything).
   */
  async verifyCommands(subject: string, commands: VerifyCommand[]): Promise<VerifyReport> {
    const checks = checkVerifyInput(subject, commands)
    const results = []
    for (const check of checks) {
      const started = Date.now()
      const result = await this.governedTool('bash', {
        command: check.command,
        ...(check.timeoutMs !== undefined ? { timeout: check.timeoutMs } : {}),
      })
      results.push(verifyResult(check, result, Date.now() - started))
    }
    return {
      subject,
      passed: results.every((r) => !r.required || (r.exitCode === 0 && !r.timedOut)),
      results,
    }
  }

  /**
   * Run a `git` command (`status`, `log`, `diff`, `branch`, `checkout`, `stash`, `remote`,
   * `worktree`, `init`, `add`, `commit`) with its arguments. Never throws: failures are results.
   */
  git(
    command: string,
    args: Record<string, unknown> = {},
    options: CallOptions = {},
  ): Promise<ToolResult> {
    return this.tool('git', { ...args, command }, options)
  }

  /**
   * Run a program with the `program` tool (host-direct: its tool calls keep the host's trust,
   * as `batch`'s do; use `governedTool('program', ...)` for the model-side path). Never throws:
   * failures, limits included, are results (`metadata.limit` names the limit hit).
   */
  program(options: ProgramOptions): Promise<ToolResult> {
    const { source, path, inputs, allowedTools, limits, signal } = options ?? {}
    return this.tool(
      'program',
      {
        ...(source !== undefined ? { source } : {}),
        ...(path !== undefined ? { path } : {}),
        ...(inputs !== undefined ? { inputs } : {}),
        ...(allowedTools !== undefined ? { allowed_tools: allowedTools } : {}),
        ...(limits !== undefined ? { limits } : {}),
      },
      signal ? { signal } : {},
    )
  }

  /**
   * Add MCP server `name`: connect it and offer its tools as `mcp__<name>__<tool>`. Resolves to
   * the tool names. Throws `IsoagentError`: `invalid_argument` (bad name or config, a name in
   * use), `unsupported` (stdio outside Node.js), `transport`, `timeout` or `permission_denied`
   * for a failed connect (the server then shows in {@link Session.mcpStatus} with its error).
   * `options.fetch` carries HTTP requests (default: the runtime's `fetch`, the URL trusted).
   */
  async addMcpServer(
    name: string,
    config: McpServerConfig,
    options: McpAddOptions = {},
  ): Promise<{ tools: string[] }> {
    return this.mcp().add(name, config, options)
  }

  /** Remove MCP server `name` (its tools leave, its connection closes); false when unknown. */
  removeMcpServer(name: string): Promise<boolean> {
    return this.mcp().remove(name)
  }

  /** The session's MCP servers: connected or not, enabled, tool count, last error. */
  mcpStatus(): McpServerStatus[] {
    return this.agent.mcp?.status() ?? []
  }

  private mcp(): McpManager {
    const mcp = this.agent.mcp
    if (mcp === undefined) throw new IsoagentError('unsupported', 'this session has no MCP client')
    return mcp
  }

  /** Refuse new calls, abort running ones and pending confirmations, end event streams. */
  async close(): Promise<void> {
    if (this.kernel.closed) return
    this.agent.retrieval?.close()
    await Promise.all([this.agent.conversation.close(), this.agent.background.close()])
    this.kernel.close()
    await this.agent.mcp?.close()
    await Promise.allSettled(this.kernel.list().map((tool) => tool.close?.()))
    await this.workspace.close?.()
  }
}
