import { IsoagentError } from '../errors.ts'
import type { BudgetLimits } from '../kernel/budget.ts'
import type { ToolHooks } from '../kernel/hooks.ts'
import type { PermissionRules } from '../kernel/permissions.ts'
import { checkNetOptions, type NetOptions } from '../net/net-options.ts'
import type { ArtifactStore } from '../projection/artifact-store.ts'
import type { ToolResultTransformPolicyV1 } from '../projection/policy.ts'
import type { GitAuthor } from '../tools/git/git.ts'
import type { QuickJsLoader } from '../tools/program/quickjs-loader.ts'
import { checkEngines } from '../tools/web-search/engine-config.ts'
import type { WebSearchOptions } from '../tools/web-search/web-search.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'
import type { CustomTool } from './custom-tool.ts'
import type { SkillsOptions } from '../skills/skill.ts'
import { checkMcpServers, type McpServerConfig } from '../mcp-client/mcp-config.ts'
import { resolveRetrievalOptions, type RetrievalOptions } from '../retrieval/retrieval-options.ts'
import type { WorkflowStore } from '../tools/dynamic-workflow/workflow-store.ts'

/** `SessionOptions.workflows`: enables `dynamic_workflow`. */
export interface WorkflowOptions {
  /**
   * Where runs are journaled (default: the workspace file store `.a3s/workflow/<run_id>.jsonl`
   * when the workspace can write, else memory).
   */
  store?: WorkflowStore
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
  /** `web_search`: engines (default: public ones), the browser tier, API keys. */
  webSearch?: WebSearchOptions
  /**
   * Network policy of `download`, `web_fetch` and `web_search`: hosts let past the address
   * policy (tests, intranets; never a default), a DNS resolver for the Node transport's checks
   * and pinning, and the `User-Agent`.
   */
  net?: NetOptions
  /**
   * Skills (`SKILL.md` folders and `x.md` files with YAML front matter): workspace folders
   * (default `.agents/skills`, `.claude/skills`, `.a3s/skills`), host folders, inline skills, a
   * persona. `false` turns skills off. `search_skills` and `Skill` are offered while at least one
   * discoverable skill exists.
   */
  skills?: SkillsOptions | false
  /**
   * MCP servers whose tools this session offers as `mcp__<server>__<tool>` (over the Agent's
   * `mcpServers`, a server of the same name replaced). Their URLs are trusted: they come from
   * the host's code.
   */
  mcpServers?: Record<string, McpServerConfig>
  /**
   * Semantic retrieval: with an embedder, `search` gains the `semantic` and `hybrid` modes over
   * an index the session builds in the background (see `session.retrievalStatus()`).
   */
  retrieval?: RetrievalOptions
  /** Enables the `dynamic_workflow` tool (absent: the session has no such tool). */
  workflows?: WorkflowOptions
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
  'webSearch',
  'net',
  'skills',
  'mcpServers',
  'retrieval',
  'workflows',
  'workspace',
])

export function checkOptions(options: SessionOptions): void {
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
  checkSkillsOption(options.skills)
  if (options.retrieval !== undefined) resolveRetrievalOptions(options.retrieval)
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
  checkNetOptions(options.net)
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
  checkWebSearch(options.webSearch)
  checkMcpServers(options.mcpServers)
  checkWorkflows(options.workflows)
}

function checkWorkflows(workflows: WorkflowOptions | undefined): void {
  if (workflows === undefined) return
  if (typeof workflows !== 'object' || workflows === null || Array.isArray(workflows))
    throw new IsoagentError('invalid_argument', 'workflows must be an object { store? }')
  for (const key of Object.keys(workflows))
    if (key !== 'store')
      throw new IsoagentError('invalid_argument', `unknown workflows option "${key}"`)
  const store = workflows.store
  if (
    store !== undefined &&
    (typeof store !== 'object' ||
      store === null ||
      typeof store.append !== 'function' ||
      typeof store.history !== 'function' ||
      typeof store.list !== 'function')
  )
    throw new IsoagentError('invalid_argument', 'workflows.store must be a WorkflowStore')
}

function checkWebSearch(ws: WebSearchOptions | undefined): void {
  if (ws === undefined) return
  if (typeof ws !== 'object' || ws === null)
    throw new IsoagentError('invalid_argument', 'webSearch must be an object')
  for (const key of Object.keys(ws)) {
    if (!['engines', 'browser', 'apiKeys', 'breaker'].includes(key))
      throw new IsoagentError('invalid_argument', `unknown webSearch option "${key}"`)
  }
  if (ws.engines !== undefined) checkEngines(ws.engines)
  const b = ws.browser
  if (
    b !== undefined &&
    (typeof b !== 'object' ||
      b === null ||
      typeof b.search !== 'function' ||
      typeof b.acquire !== 'function')
  )
    throw new IsoagentError('invalid_argument', 'webSearch.browser must be a HeadlessBrowser')
  const keys = ws.apiKeys
  if (
    keys !== undefined &&
    (typeof keys !== 'object' ||
      keys === null ||
      Array.isArray(keys) ||
      Object.values(keys).some((v) => typeof v !== 'string'))
  )
    throw new IsoagentError(
      'invalid_argument',
      'webSearch.apiKeys must map engine names to strings',
    )
  const br = ws.breaker
  if (br !== undefined) {
    if (typeof br !== 'object' || br === null)
      throw new IsoagentError('invalid_argument', 'webSearch.breaker must be an object')
    for (const k of ['failureThreshold', 'emptyThreshold', 'openMs', 'maxOpenMs'] as const) {
      const v = br[k]
      if (v !== undefined && (!Number.isInteger(v) || v < 1))
        throw new IsoagentError(
          'invalid_argument',
          `webSearch.breaker.${k} must be a positive integer`,
        )
    }
    if (br.now !== undefined && typeof br.now !== 'function')
      throw new IsoagentError('invalid_argument', 'webSearch.breaker.now must be a function')
  }
}

function checkSkillsOption(skills: SessionOptions['skills']): void {
  if (skills === undefined || skills === false) return
  if (typeof skills !== 'object' || skills === null || Array.isArray(skills))
    throw new IsoagentError('invalid_argument', 'skills must be an object or false')
  for (const key of Object.keys(skills))
    if (!['dirs', 'inline', 'host', 'persona'].includes(key))
      throw new IsoagentError('invalid_argument', `skills: unknown field "${key}"`)
  if (
    skills.dirs !== undefined &&
    (!Array.isArray(skills.dirs) || skills.dirs.some((d) => typeof d !== 'string'))
  )
    throw new IsoagentError('invalid_argument', 'skills.dirs must be an array of workspace paths')
  if (skills.inline !== undefined && !Array.isArray(skills.inline))
    throw new IsoagentError('invalid_argument', 'skills.inline must be an array of skills')
  if (skills.persona !== undefined && typeof skills.persona !== 'string')
    throw new IsoagentError('invalid_argument', 'skills.persona must be a skill name')
}
