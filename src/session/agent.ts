import { IsoagentError } from '../errors.ts'
import type { BudgetLimits } from '../kernel/budget.ts'
import type { ToolHooks } from '../kernel/hooks.ts'
import { Kernel } from '../kernel/kernel.ts'
import type { PermissionRules } from '../kernel/permissions.ts'
import { memoryArtifactStore, type ArtifactStore } from '../projection/artifact-store.ts'
import {
  ToolResultTransformPolicy,
  type ToolResultTransformPolicyV1,
} from '../projection/policy.ts'
import { builtinTools } from '../tools/builtin.ts'
import { createGitTool, type GitAuthor } from '../tools/git/git.ts'
import { createProgramTool } from '../tools/program/program.ts'
import { quickJsFromModule, type QuickJsLoader } from '../tools/program/quickjs-loader.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'
import { customToolSpec, type CustomTool } from './custom-tool.ts'
import { Session } from './session.ts'
import { parseSnapshot, type SessionSnapshot } from './snapshot.ts'
import { workspaceResolver } from './workspace-resolvers.ts'

/** Options of {@link Agent.create}. */
export interface AgentOptions {
  /** The language model; needed only once an LLM feature is used. */
  model?: unknown
}

/** Options of {@link Agent.session}. */
export interface SessionOptions {
  /** Pinned projection policy (default `ToolResultTransformPolicy.conservative()`). */
  toolResultTransformPolicy?: ToolResultTransformPolicyV1
  /** Rules for model-side calls: `tool` or `tool(glob)`; deny > ask > allow. */
  permissions?: PermissionRules
  hooks?: ToolHooks
  budget?: BudgetLimits
  /** One deadline (ms) for every tool, or per-tool deadlines. */
  toolTimeoutMs?: number | Record<string, number>
  /** Bound on each hook invocation (default 5000 ms); a hook past it fails closed. */
  hookTimeoutMs?: number
  /** How long an `ask` waits for `confirmToolUse` before it counts as refused (default: forever). */
  confirmationTimeoutMs?: number
  /** Values never shown in any output, metadata or event (replaced by `[REDACTED]`). */
  redactSecrets?: string[]
  /** Where lossy results keep their full original (default: 64 MiB in memory). */
  artifactStore?: ArtifactStore
  /** Events a slow subscriber may have waiting before the oldest are dropped (default 1024). */
  eventBufferSize?: number
  /** Host-defined tools. */
  tools?: CustomTool[]
  /**
   * Author and committer of the `git` tool's commits and stashes (default
   * `{ name: 'isoagent', email: 'isoagent@localhost' }`). Also on the CLI path, the repository's
   * and the user's `user.name`/`user.email` are not used.
   */
  gitAuthor?: GitAuthor
  /**
   * QuickJS for the `program` tool: a loader, or its WebAssembly module as the runtime has it
   * (workerd: `import wasm from '@jitl/quickjs-wasmfile-release-sync/wasm'`). Default: the
   * loader `isoagent/node` sets on import, else one that imports the variant package.
   */
  quickjs?: QuickJsLoader | WebAssembly.Module
}

/** Options of {@link Agent.resumeSession}. */
export interface ResumeOptions extends SessionOptions {
  /** The workspace to resume on; else rebuilt from the snapshot's descriptor where possible. */
  workspace?: WorkspaceServices
}

const OPTION_KEYS = new Set<string>([
  'toolResultTransformPolicy',
  'permissions',
  'hooks',
  'budget',
  'toolTimeoutMs',
  'hookTimeoutMs',
  'confirmationTimeoutMs',
  'redactSecrets',
  'artifactStore',
  'eventBufferSize',
  'tools',
  'gitAuthor',
  'quickjs',
  'workspace',
])

function checkOptions(options: SessionOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new IsoagentError('invalid_argument', 'session options must be an object')
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key))
      throw new IsoagentError('invalid_argument', `unknown session option "${key}"`)
  }
  for (const key of ['hookTimeoutMs', 'confirmationTimeoutMs', 'eventBufferSize'] as const) {
    const v = options[key]
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < 1)) {
      throw new IsoagentError('invalid_argument', `${key} must be a positive integer`)
    }
  }
  if (
    options.redactSecrets !== undefined &&
    (!Array.isArray(options.redactSecrets) ||
      options.redactSecrets.some((s) => typeof s !== 'string'))
  ) {
    throw new IsoagentError('invalid_argument', 'redactSecrets must be an array of strings')
  }
  const author = options.gitAuthor
  if (
    author !== undefined &&
    (typeof author !== 'object' ||
      author === null ||
      typeof author.name !== 'string' ||
      typeof author.email !== 'string' ||
      author.name.trim() === '' ||
      /[<>\n]/.test(author.name + author.email))
  ) {
    throw new IsoagentError(
      'invalid_argument',
      'gitAuthor must be { name, email }: non-empty strings without <, > or newlines',
    )
  }
  const quickjs = options.quickjs
  if (
    quickjs !== undefined &&
    typeof quickjs !== 'function' &&
    !(typeof WebAssembly !== 'undefined' && quickjs instanceof WebAssembly.Module)
  ) {
    throw new IsoagentError(
      'invalid_argument',
      'quickjs must be a QuickJsLoader function or a WebAssembly.Module',
    )
  }
}

/** Creates sessions; holds what they share (the model). */
export class Agent {
  readonly options: AgentOptions

  private constructor(options: AgentOptions) {
    this.options = options
  }

  static create(options: AgentOptions = {}): Agent {
    return new Agent(options)
  }

  /**
   * A session over `workspace`, offering exactly the tools its capabilities can serve. Throws
   * `IsoagentError` `invalid_argument` for options that are out of range, unknown or do not parse.
   */
  async session(workspace: WorkspaceServices, options: SessionOptions = {}): Promise<Session> {
    return this.build(workspace, options, undefined)
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
    )
  }

  private async build(
    workspace: WorkspaceServices,
    options: SessionOptions,
    used: SessionSnapshot['budget']['used'] | undefined,
  ): Promise<Session> {
    checkOptions(options)
    const policy = ToolResultTransformPolicy.validate(
      options.toolResultTransformPolicy ?? ToolResultTransformPolicy.conservative(),
    )
    const gitAuthor = options.gitAuthor
    const quickjs = options.quickjs
    const loader = quickjs instanceof WebAssembly.Module ? quickJsFromModule(quickjs) : quickjs
    const tools = builtinTools
      .filter((tool) => tool.available(workspace.capabilities))
      .map((tool) =>
        tool.name === 'git' && gitAuthor !== undefined
          ? (createGitTool({
              name: gitAuthor.name,
              email: gitAuthor.email,
            }) as unknown as typeof tool)
          : tool.name === 'program' && loader !== undefined
            ? (createProgramTool(loader) as unknown as typeof tool)
            : tool,
      )
    const reserved = new Set(builtinTools.map((t) => t.name))
    const custom = (options.tools ?? []).map((t) => customToolSpec(t, reserved))
    const names = new Set<string>()
    for (const t of custom) {
      if (names.has(t.name))
        throw new IsoagentError('invalid_argument', `custom tool ${t.name} is registered twice`)
      names.add(t.name)
    }
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
      ...(options.redactSecrets ? { redactSecrets: options.redactSecrets } : {}),
      ...(options.eventBufferSize !== undefined
        ? { eventBufferSize: options.eventBufferSize }
        : {}),
    })
    return new Session(kernel)
  }
}
