import type { ToolSpec } from '../kernel/tool-spec.ts'
import type { LanguageModel } from '../llm/language-model.ts'
import { builtinTools } from '../tools/builtin.ts'
import { createGenerateObjectTool } from '../tools/generate-object/generate-object.ts'
import { createGitTool } from '../tools/git/git.ts'
import { createDownloadTool } from '../tools/download/download.ts'
import { createWebFetchTool } from '../tools/web-fetch/web-fetch.ts'
import { createProgramTool } from '../tools/program/program.ts'
import { quickJsFromModule } from '../tools/program/quickjs-loader.ts'
import { createWebSearchTool } from '../tools/web-search/web-search.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'
import { createSearchTool } from '../tools/search/search.ts'
import type { WorkspaceRetrieval } from '../retrieval/workspace-retrieval.ts'
import { createTaskTool } from '../tools/task/task.ts'
import { createDynamicWorkflowTool } from '../tools/dynamic-workflow/dynamic-workflow.ts'
import {
  memoryWorkflowStore,
  type WorkflowEvent,
} from '../tools/dynamic-workflow/workflow-store.ts'
import { workspaceWorkflowStore } from '../tools/dynamic-workflow/workspace-workflow-store.ts'
import type { TaskHost } from '../tools/task/task-host.ts'
import type { SessionOptions } from './session-options.ts'

type AnyTool = ToolSpec<Record<string, unknown>>

/** What a session's tools may use beyond its workspace and options: the Agent's model. */
export interface SessionToolContext {
  /** Each `dynamic_workflow` journal event as it is appended (to the session's stream). */
  onWorkflowEvent?: (runId: string, event: WorkflowEvent) => void
  model?: LanguageModel | undefined
  /** With a model: what `task` needs (its sub-agents' tools and the background tasks). */
  tasks?: TaskHost
  /** With `SessionOptions.retrieval`: the index the `search` tool's semantic modes use. */
  retrieval?: WorkspaceRetrieval
}

/**
 * The built-in tools a session over `workspace` offers, each configured from the session's
 * options. A tool whose options change its behaviour is built here by its factory; tools that
 * need a model (generate_object, then `task` and its hidden alias `parallel_task`) come after the
 * workspace's when the Agent has one.
 */
export function sessionTools(
  workspace: WorkspaceServices,
  options: SessionOptions,
  context: SessionToolContext = {},
): AnyTool[] {
  const factories: Record<string, (() => AnyTool) | undefined> = {}
  const author = options.gitAuthor
  if (author !== undefined) {
    factories.git = () =>
      createGitTool({ name: author.name, email: author.email }) as unknown as AnyTool
  }
  const quickjs = options.quickjs
  const loader = quickjs instanceof WebAssembly.Module ? quickJsFromModule(quickjs) : quickjs
  if (loader !== undefined) {
    factories.program = () => createProgramTool(loader) as unknown as AnyTool
  }
  const net = options.net
  if (net !== undefined) {
    factories.web_fetch = () => createWebFetchTool(net) as unknown as AnyTool
    factories.download = () => createDownloadTool(net) as unknown as AnyTool
  }
  factories.web_search = () =>
    createWebSearchTool(
      options.webSearch,
      options.net ? { net: options.net } : {},
    ) as unknown as AnyTool
  const retrieval = context.retrieval
  if (retrieval !== undefined)
    factories.search = () => createSearchTool(retrieval) as unknown as AnyTool
  const tools = builtinTools
    .filter((tool) => tool.available(workspace.capabilities))
    .map((tool) => factories[tool.name]?.() ?? tool)
  const model = context.model
  if (model !== undefined) tools.push(createGenerateObjectTool(model) as unknown as AnyTool)
  const tasks = context.tasks
  if (tasks !== undefined) {
    tools.push(
      createTaskTool(tasks) as unknown as AnyTool,
      createTaskTool(tasks, 'parallel_task', true) as unknown as AnyTool,
    )
  }
  const workflows = options.workflows
  if (workflows !== undefined) {
    const store =
      workflows.store ??
      (workspace.capabilities.write ? workspaceWorkflowStore(workspace) : memoryWorkflowStore())
    tools.push(
      createDynamicWorkflowTool({
        store,
        ...(loader !== undefined ? { loader } : {}),
        ...(context.onWorkflowEvent !== undefined ? { onEvent: context.onWorkflowEvent } : {}),
      }) as unknown as AnyTool,
    )
  }
  return tools
}
