// The shared conformance suites against R2 in workerd: Miniflare's local R2, reached through the
// binding proxied into workerd, so every bucket call runs in workerd's own R2 implementation.
import { afterAll, beforeAll } from 'vitest'
import { r2Workspace } from '../../adapters/r2/index.ts'
import { freshPrefix, startLocalR2, wipe, type LocalR2 } from '../r2/miniflare-r2.ts'
import { portConformance } from './port-cases.ts'
import { r2Fixture } from './r2-fixture.ts'
import { toolConformance } from './tool-cases.ts'

let r2: LocalR2

beforeAll(async () => {
  r2 = await startLocalR2()
})
afterAll(async () => {
  await r2?.close()
})

// The factories read `r2` when a test runs, after beforeAll has started workerd.
toolConformance(
  'r2 (Miniflare)',
  r2Fixture(() => r2.bucket),
  { localDisk: false },
)

portConformance('r2 (Miniflare)', async () => {
  const prefix = freshPrefix('port/')
  return {
    workspace: r2Workspace(r2.bucket, { prefix }),
    cleanup: () => wipe(r2.bucket, prefix),
  }
})

// Listings that take several pages (the 23-entry case pages at 5; R2 pages here at 2).
portConformance('r2 (Miniflare, 2 keys per list page)', async () => {
  const prefix = freshPrefix('port-small/')
  return {
    workspace: r2Workspace(r2.bucket, { prefix, listPageSize: 2 }),
    cleanup: () => wipe(r2.bucket, prefix),
  }
})
