// The `isoagent/node` entry: workspaces and services that need Node.js.
export { localWorkspace } from './local-workspace.ts'
export type { LocalWorkspaceOptions } from './local-workspace.ts'
