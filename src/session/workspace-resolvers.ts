import type { WorkspaceDescriptor, WorkspaceServices } from '../workspace/workspace-services.ts'

type Resolver = (descriptor: WorkspaceDescriptor) => WorkspaceServices | Promise<WorkspaceServices>

const resolvers = new Map<WorkspaceDescriptor['kind'], Resolver>()

/**
 * Teach `agent.resumeSession` to rebuild workspaces of `kind` from a snapshot's descriptor.
 * Adapter entries register themselves (importing `isoagent/node` registers `local`).
 */
export function registerWorkspaceKind(kind: WorkspaceDescriptor['kind'], resolve: Resolver): void {
  resolvers.set(kind, resolve)
}

/** The registered resolver for `kind`, if any. */
export function workspaceResolver(kind: WorkspaceDescriptor['kind']): Resolver | undefined {
  return resolvers.get(kind)
}
