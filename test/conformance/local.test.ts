import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { localWorkspace } from '../../adapters/node-fs/index.ts'
import { portConformance } from './port-cases.ts'
import { localFixture } from './fixture.ts'
import { toolConformance } from './tool-cases.ts'

toolConformance('local disk', localFixture, { localDisk: true })

portConformance('local disk', async () => {
  const root = mkdtempSync(join(tmpdir(), 'isoagent-port-'))
  return {
    workspace: localWorkspace(root),
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
  }
})
