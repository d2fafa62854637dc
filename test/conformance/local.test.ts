import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { localWorkspace } from '../../adapters/node/index.ts'
import { portConformance } from './port-cases.ts'
import { localAsyncFixture, localFixture } from './fixture.ts'
import { toolConformance } from './tool-cases.ts'

toolConformance('local disk', localFixture, { localDisk: true })
toolConformance('local disk, asynchronous system calls', localAsyncFixture, { localDisk: true })

portConformance('local disk', async () => {
  const root = mkdtempSync(join(tmpdir(), 'isoagent-port-'))
  return {
    workspace: localWorkspace(root),
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
  }
})

portConformance('local disk, asynchronous system calls', async () => {
  const root = mkdtempSync(join(tmpdir(), 'isoagent-port-'))
  return {
    workspace: localWorkspace(root, { syncMetadata: false }),
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
  }
})
