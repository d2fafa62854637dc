// The `isoagent/node` entry: workspaces and services that need Node.js.
export { localWorkspace } from './local-workspace.ts'
export type { LocalWorkspaceOptions } from './local-workspace.ts'
export { hostSkillDirs } from './host-skill-dirs.ts'
export { baseShellEnv, KILL_GRACE_MS, nodeShell } from './node-shell.ts'
export type { NodeShellOptions } from './node-shell.ts'
export { gitCliAvailable, gitCliBackend } from './git-cli-backend.ts'
export type { GitCliBackendOptions } from './git-cli-backend.ts'
export { nodeQuickJs } from './node-quickjs.ts'
export { nodeTreeSitterSymbols, treeSitterGrammarPath } from './tree-sitter.ts'
export { createNodeProgramRunner, nodeProgramRunner } from './node-program-runner.ts'
export type { NodeProgramRunner, NodeProgramRunnerOptions } from './node-program-runner.ts'
export { nodeHttpTransport, pinnedLookup, systemResolver } from './node-http-transport.ts'
export { NodeStdioMcpTransport, nodeStdioMcpLauncher } from './stdio-mcp-transport.ts'

import { registerWorkspaceKind } from '../../src/index.ts'
import { localWorkspace as local } from './local-workspace.ts'
// The Node runtime wiring: download, web_fetch, web_search resolve DNS here, check and pin every
// answer (address_check "resolved"); program guests run in killable worker threads; MCP servers
// over stdio run in their own process groups. Every Node
// entry of the package imports it too.
import './node-runtime.ts'

// Lets `agent.resumeSession(snapshot)` rebuild local workspaces from their descriptor.
registerWorkspaceKind('local', (descriptor) => {
  if (descriptor.kind !== 'local') throw new Error('not a local workspace descriptor')
  return local(descriptor.root)
})
