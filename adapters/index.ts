// The `isoagent` entry: the isomorphic core plus the memory workspace, usable everywhere.
export * from '../src/index.ts'
export { memoryWorkspace } from './memory/index.ts'
