import { memoryWorkspace } from '../../adapters/index.ts'
import { portConformance } from './port-cases.ts'
import { memoryFixture } from './fixture.ts'
import { toolConformance } from './tool-cases.ts'

toolConformance('memory', memoryFixture, { localDisk: false })

portConformance('memory', async () => ({ workspace: memoryWorkspace(), cleanup: async () => {} }))
