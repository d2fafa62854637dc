// The `isoagent/node` entry: workspaces and services that need Node.js.
export { localWorkspace } from './local-workspace.ts'
export type { LocalWorkspaceOptions } from './local-workspace.ts'
export { baseShellEnv, KILL_GRACE_MS, nodeShell } from './node-shell.ts'
export type { NodeShellOptions } from './node-shell.ts'
export { gitCliAvailable, gitCliBackend } from './git-cli-backend.ts'
export type { GitCliBackendOptions } from './git-cli-backend.ts'
export { nodeQuickJs } from './node-quickjs.ts'
export { nodeHttpTransport, pinnedLookup, systemResolver } from './node-http-transport.ts'
export { NodeStdioMcpTransport, nodeStdioMcpLauncher } from './stdio-mcp-transport.ts'

import {
  registerWorkspaceKind,
  setDefaultHttpTransport,
  setDefaultQuickJsLoader,
  setMcpStdioLauncher,
} from '../../src/index.ts'
import { nodeStdioMcpLauncher } from './stdio-mcp-transport.ts'
import { nodeHttpTransport as http } from './node-http-transport.ts'
import { localWorkspace as local } from './local-workspace.ts'
import { nodeQuickJs as quickjs } from './node-quickjs.ts'

// The program tool's QuickJS: compiled once per process from the variant's .wasm file.
setDefaultQuickJsLoader(quickjs)

// download and web_fetch: DNS resolved here, checked and pinned (address_check "resolved").
setDefaultHttpTransport(http)

// MCP servers over stdio: children in their own process groups, killed with the session.
setMcpStdioLauncher(nodeStdioMcpLauncher)

// Lets `agent.resumeSession(snapshot)` rebuild local workspaces from their descriptor.
registerWorkspaceKind('local', (descriptor) => {
  if (descriptor.kind !== 'local') throw new Error('not a local workspace descriptor')
  return local(descriptor.root)
})
