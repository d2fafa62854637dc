// The `isoagent/s3` entry: the isomorphic core plus the S3 workspace (AWS S3, R2, MinIO, s3rver).
export * from '../index.ts'
export { s3Workspace, DEFAULT_MULTIPART_THRESHOLD, DEFAULT_PART_BYTES } from './s3-workspace.ts'
export type { S3WorkspaceOptions, S3WorkspaceServices } from './s3-workspace.ts'

import { registerWorkspaceKind } from '../../src/index.ts'
import { s3Workspace as s3 } from './s3-workspace.ts'

// Lets `agent.resumeSession(snapshot)` rebuild S3 workspaces from their descriptor (the client is
// configured from the environment, as `new S3Client({})` would be).
registerWorkspaceKind('s3', (descriptor) => {
  if (descriptor.kind !== 's3') throw new Error('not an s3 workspace descriptor')
  return s3({ bucket: descriptor.bucket, prefix: descriptor.prefix })
})
