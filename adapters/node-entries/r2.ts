// `isoagent/r2` as Node.js resolves it (the package's `"node"` export condition): the same exports,
// plus the Node runtime wiring (names resolved and every answer checked).
import '../node/node-runtime.ts'
export * from '../r2/index.ts'
