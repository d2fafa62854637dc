// The git cases on browserWorkspace in Node: lightning-fs on fake-indexeddb.
import '../conformance/browser-env.ts'
import { WorkspacePath } from '../../adapters/index.ts'
import { browserWorkspace } from '../../adapters/browser/index.ts'
import { uniqueFsName } from '../conformance/browser-fixture.ts'
import { portTarget } from './git-fixture.ts'
import { gitCases } from './git-cases.ts'

gitCases(
  portTarget('browser (fake-indexeddb)', async (files) => {
    const workspace = browserWorkspace({ name: uniqueFsName('isoagent-git') })
    for (const [path, bytes] of Object.entries(files))
      await workspace.write(WorkspacePath.parse(path), bytes)
    return workspace
  }),
)
