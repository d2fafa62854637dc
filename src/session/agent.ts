import { IsoagentError } from '../errors.ts'
import { Kernel } from '../kernel/kernel.ts'
import type { LanguageModel, ModelMessage } from '../llm/language-model.ts'
import { memoryArtifactStore } from '../projection/artifact-store.ts'
import { ToolResultTransformPolicy } from '../projection/policy.ts'
import { BackgroundTasks } from '../agent/background-tasks.ts'
import { Conversation } from '../agent/conversation.ts'
import type { ToolSpec } from '../kernel/tool-spec.ts'
import { builtinTools, modelToolSchemas } from '../tools/builtin.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'
import { customToolSpec } from './custom-tool.ts'
import { SkillRegistry } from '../skills/skill-registry.ts'
import { attachSkills, skillSystemPrompt } from '../skills/session-skills.ts'
import { Session } from './session.ts'
import { WorkspaceRetrieval } from '../retrieval/workspace-retrieval.ts'
import { workspaceFileLister } from '../tools/search/retrieval-files.ts'
import { checkOptions, type ResumeOptions, type SessionOptions } from './session-options.ts'
import { sessionTools } from './session-tools.ts'
import type { WorkflowEvent } from '../tools/dynamic-workflow/workflow-store.ts'
import { workflowStepEvent } from '../tools/dynamic-workflow/workflow-events.ts'
import { parseSnapshot, type SessionSnapshot } from './snapshot.ts'
import { workspaceResolver } from './workspace-resolvers.ts'
import { checkMcpServers, type McpServerConfig } from '../mcp-client/mcp-config.ts'
import { McpManager } from '../mcp-client/mcp-manager.ts'
import { mcpSecrets } from '../mcp-client/mcp-secrets.ts'

/** Options of {@link Agent.create}. */
export interface AgentOptions {
  /** The language model; needed only once an LLM feature is used (send, stream, task). */
  model?: LanguageModel
  /** System prompt of every session's conversation. */
  system?: string
  /** MCP servers every session connects (a session's own `mcpServers` replace same names). */
  mcpServers?: Record<string, McpServerConfig>
}

export type { ResumeOptions, SessionOptions } from './session-options.ts'

/** Creates sessions; holds what they share (the model). */
export class Agent {
  readonly options: AgentOptions

  private constructor(options: AgentOptions) {
    this.options = options
  }

  /** Throws `IsoagentError` `invalid_argument` for a model that is not a `LanguageModel`. */
  static create(options: AgentOptions = {}): Agent {
    const model = options?.model
    if (
      model !== undefined &&
      (typeof model !== 'object' ||
        model === null ||
        typeof model.stream !== 'function' ||
        typeof model.generate !== 'function' ||
        typeof model.capabilities !== 'object')
    )
      throw new IsoagentError('invalid_argument', 'model must be a LanguageModel')
    if (options?.system !== undefined && typeof options.system !== 'string')
      throw new IsoagentError('invalid_argument', 'system must be a string')
    checkMcpServers(options?.mcpServers)
    return new Agent(options ?? {})
  }

  /**
   * A session over `workspace`, offering exactly the tools its capabilities can serve. Throws
   * `IsoagentError` `invalid_argument` for options that are out of range, unknown or do not parse.
   */
  async session(workspace: WorkspaceServices, options: SessionOptions = {}): Promise<Session> {
    return this.build(workspace, options, undefined, undefined)
  }

  /**
   * Resume a session from {@link Session.snapshot}: the pinned projection policy is inherited (an
   * explicit different policy is refused), as are permissions, budget limits and consumption and
   * deadlines unless given again. Hooks, custom tools and secrets are not in snapshots.
   */
  async resumeSession(snapshot: SessionSnapshot, options: ResumeOptions = {}): Promise<Session> {
    const parsed = parseSnapshot(snapshot)
    checkOptions(options)
    const pinned = ToolResultTransformPolicy.validate(parsed.tool_result_transform_policy)
    if (options.toolResultTransformPolicy !== undefined) {
      const explicit = ToolResultTransformPolicy.validate(options.toolResultTransformPolicy)
      if (!ToolResultTransformPolicy.equals(explicit, pinned)) {
        throw new IsoagentError(
          'invalid_argument',
          'the snapshot pins a different toolResultTransformPolicy; resuming with another policy is refused so replay shows what the model saw (omit it to inherit)',
          { data: { pinned, requested: explicit } },
        )
      }
    }
    let workspace = options.workspace
    if (workspace === undefined) {
      const resolve = workspaceResolver(parsed.workspace.kind)
      if (resolve === undefined) {
        throw new IsoagentError(
          'unsupported',
          `cannot rebuild a ${parsed.workspace.kind} workspace from a snapshot${parsed.workspace.kind === 'memory' ? ' (its contents lived in memory)' : ' (import its adapter entry first)'}; pass options.workspace`,
        )
      }
      workspace = await resolve(parsed.workspace)
    }
    const { workspace: _w, ...rest } = options
    return this.build(
      workspace,
      {
        permissions: parsed.permissions,
        budget: parsed.budget.limits,
        ...(parsed.tool_timeout_ms === null ? {} : { toolTimeoutMs: parsed.tool_timeout_ms }),
        ...rest,
        toolResultTransformPolicy: pinned,
      },
      parsed.budget.used,
      parsed.conversation?.messages,
    )
  }

  private async build(
    workspace: WorkspaceServices,
    options: SessionOptions,
    used: SessionSnapshot['budget']['used'] | undefined,
    messages: ModelMessage[] | undefined,
  ): Promise<Session> {
    checkOptions(options)
    const policy = ToolResultTransformPolicy.validate(
      options.toolResultTransformPolicy ?? ToolResultTransformPolicy.conservative(),
    )
    const model = this.options.model
    const background = new BackgroundTasks()
    let listed: () => readonly ToolSpec<Record<string, unknown>>[] = () => []
    const retrieval =
      options.retrieval !== undefined &&
      workspace.capabilities.read &&
      workspace.capabilities.search
        ? new WorkspaceRetrieval(workspace, options.retrieval, workspaceFileLister(workspace))
        : undefined
    let emitWorkflow: (runId: string, event: WorkflowEvent) => void = () => {}
    const tools = sessionTools(workspace, options, {
      model,
      onWorkflowEvent: (runId, event) => emitWorkflow(runId, event),
      ...(retrieval === undefined ? {} : { retrieval }),
      ...(model === undefined ? {} : { tasks: { model, background, tools: () => listed() } }),
    })
    const reserved = new Set([
      ...[...builtinTools, ...modelToolSchemas].map((t) => t.name),
      'task',
      'parallel_task',
    ])
    const custom = (options.tools ?? []).map((t) => customToolSpec(t, reserved))
    const names = new Set<string>()
    for (const t of custom) {
      if (names.has(t.name))
        throw new IsoagentError('invalid_argument', `custom tool ${t.name} is registered twice`)
      names.add(t.name)
    }
    // API keys of web_search engines never show, whatever an engine echoes back, nor as they
    // stand in a URL (a result linking to the engine's own request, a browser's error).
    const keys = Object.values(options.webSearch?.apiKeys ?? {}).filter((k) => k.length >= 4)
    const servers = { ...this.options.mcpServers, ...options.mcpServers }
    const secrets = [
      ...(options.redactSecrets ?? []),
      ...mcpSecrets(servers),
      ...keys,
      ...keys.map((k) => encodeURIComponent(k)).filter((k) => !keys.includes(k)),
    ]
    const kernel = new Kernel(workspace, [...tools, ...custom], {
      policy,
      artifactStore: options.artifactStore ?? memoryArtifactStore(),
      ...(options.permissions ? { permissions: options.permissions } : {}),
      ...(options.hooks ? { hooks: options.hooks } : {}),
      ...(options.budget ? { budget: options.budget } : {}),
      ...(used ? { budgetUsed: used } : {}),
      ...(options.toolTimeoutMs !== undefined ? { toolTimeoutMs: options.toolTimeoutMs } : {}),
      ...(options.hookTimeoutMs !== undefined ? { hookTimeoutMs: options.hookTimeoutMs } : {}),
      ...(options.confirmationTimeoutMs !== undefined
        ? { confirmationTimeoutMs: options.confirmationTimeoutMs }
        : {}),
      ...(secrets.length > 0 ? { redactSecrets: secrets } : {}),
      ...(options.eventBufferSize !== undefined
        ? { eventBufferSize: options.eventBufferSize }
        : {}),
    })
    listed = () => kernel.list()
    emitWorkflow = (runId, event) => {
      const step = workflowStepEvent(runId, event)
      if (step !== undefined && kernel.events.hasSubscribers) kernel.events.emit(step)
    }
    const mcp = new McpManager(kernel, (url, init) => fetch(url, init))
    // A server that fails to connect does not fail the session: mcpStatus() shows its error.
    await Promise.allSettled(Object.entries(servers).map(([name, c]) => mcp.add(name, c)))
    const skills = await this.loadSkills(workspace, options)
    let system: string | undefined | (() => string | undefined) = this.options.system
    if (skills !== undefined) {
      attachSkills(kernel, skills.registry, model)
      system = skillSystemPrompt(skills.registry, this.options.system, skills.persona)
    }
    const conversation = new Conversation(kernel, model, system, messages)
    const session = new Session(kernel, {
      conversation,
      background,
      hasModel: model !== undefined,
      mcp,
      ...(skills !== undefined ? { skills: skills.registry } : {}),
      ...(retrieval !== undefined ? { retrieval } : {}),
    })
    retrieval?.start()
    return session
  }

  /** The session's skill registry (none when `skills: false`) and its persona's body. */
  private async loadSkills(
    workspace: WorkspaceServices,
    options: SessionOptions,
  ): Promise<{ registry: SkillRegistry; persona?: { body: string } } | undefined> {
    if (options.skills === false) return undefined
    const registry = await SkillRegistry.load(workspace, options.skills ?? {})
    const name = options.skills?.persona
    if (name === undefined) return { registry }
    const entry = registry.get(name)
    if (entry === undefined || entry.skill.kind !== 'persona')
      throw new IsoagentError('invalid_argument', `skills.persona: no persona skill named ${name}`)
    return { registry, persona: { body: (await entry.loadBody()).body } }
  }
}
