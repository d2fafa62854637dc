// The `isoagent/node` entry: workspaces and services that need Node.js.
export { localWorkspace } from './local-workspace.ts'
export type { LocalWorkspaceOptions } from './local-workspace.ts'
export { baseShellEnv, KILL_GRACE_MS, nodeShell } from './node-shell.ts'
export type { NodeShellOptions } from './node-shell.ts'
export { gitCliAvailable, gitCliBackend } from './git-cli-backend.ts'
export type { GitCliBackendOptions } from './git-cli-backend.ts'
export { nodeQuickJs } from './node-quickjs.ts'
export { nodeHttpTransport, pinnedLookup, systemResolver } from './node-http-transport.ts'

import { registerWorkspaceKind, setDefaultQuickJsLoader } from '../../src/index.ts'
import { localWorkspace as local } from './local-workspace.ts'
import { nodeQuickJs as quickjs } from './node-quickjs.ts'
// download, web_fetch, web_search: DNS resolved here, checked and pinned (address_check
// "resolved"); every Node entry of the package imports it too.
import './node-runtime.ts'

// The program tool's QuickJS: compiled once per process from the variant's .wasm file.
setDefaultQuickJsLoader(quickjs)

// Lets `agent.resumeSession(snapshot)` rebuild local workspaces from their descriptor.
registerWorkspaceKind('local', (descriptor) => {
  if (descriptor.kind !== 'local') throw new Error('not a local workspace descriptor')
  return local(descriptor.root)
})
