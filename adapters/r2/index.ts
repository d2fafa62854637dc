// The `isoagent/r2` entry: the isomorphic core plus the R2 workspace (the Workers R2 binding).
export * from '../index.ts'
export { r2Workspace } from './r2-workspace.ts'
export type { R2WorkspaceOptions, R2WorkspaceServices } from './r2-workspace.ts'
export type {
  R2BucketLike,
  R2ConditionalLike,
  R2ListOptionsLike,
  R2ObjectBodyLike,
  R2ObjectLike,
  R2ObjectsLike,
  R2RangeLike,
} from './r2-bucket.ts'

import { IsoagentError, registerWorkspaceKind } from '../../src/index.ts'

// A snapshot names the binding, not the bucket: only the Worker holding `env` can rebind it.
registerWorkspaceKind('r2', (descriptor) => {
  const binding = descriptor.kind === 'r2' ? descriptor.binding : 'BUCKET'
  throw new IsoagentError(
    'unsupported',
    `an R2 workspace lives in the Worker binding ${binding}: resume with { workspace: r2Workspace(env.${binding}, { prefix }) }`,
  )
})
