export { memoryWorkspace } from './memory-workspace.ts'
