import type { ToolSpec } from '../kernel/tool-spec.ts'
import { builtinTools } from '../tools/builtin.ts'
import { createGitTool } from '../tools/git/git.ts'
import { createDownloadTool } from '../tools/download/download.ts'
import { createWebFetchTool } from '../tools/web-fetch/web-fetch.ts'
import { createProgramTool } from '../tools/program/program.ts'
import { quickJsFromModule } from '../tools/program/quickjs-loader.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'
import type { SessionOptions } from './session-options.ts'

type AnyTool = ToolSpec<Record<string, unknown>>

/**
 * The built-in tools a session over `workspace` offers, each configured from the session's
 * options. A tool whose options change its behaviour is built here by its factory.
 */
export function sessionTools(workspace: WorkspaceServices, options: SessionOptions): AnyTool[] {
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
  return builtinTools
    .filter((tool) => tool.available(workspace.capabilities))
    .map((tool) => factories[tool.name]?.() ?? tool)
}
