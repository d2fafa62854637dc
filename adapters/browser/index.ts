// The `isoagent/browser` entry: the isomorphic core plus the IndexedDB workspace (lightning-fs).
export * from '../index.ts'
export { browserWorkspace, DEFAULT_BROWSER_WORKSPACE_NAME } from './browser-workspace.ts'
export type { BrowserWorkspaceOptions } from './browser-workspace.ts'
export { browserProgramRunner, createBrowserProgramRunner } from './browser-program-runner.ts'
export type { BrowserProgramRunner, BrowserProgramRunnerOptions } from './browser-program-runner.ts'

import { registerWorkspaceKind, setDefaultProgramRunner } from '../../src/index.ts'
import { browserWorkspace as browser } from './browser-workspace.ts'

// Lets `agent.resumeSession(snapshot)` rebuild browser workspaces from their descriptor: the
// same lightning-fs name opens the same IndexedDB database.
registerWorkspaceKind('browser', (descriptor) => {
  if (descriptor.kind !== 'browser') throw new Error('not a browser workspace descriptor')
  return browser({ name: descriptor.name })
})

import { browserProgramRunner } from './browser-program-runner.ts'

// program: guests in Web Workers, terminated at their deadline, where the page can start them
// (elsewhere — workerd resolving this entry — the in-thread runner with native-loop bounds stays).
if (typeof Worker === 'function') setDefaultProgramRunner(browserProgramRunner)
