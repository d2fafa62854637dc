// `isoagent/edge` on Node.js (the package's `node` export condition): the entry plus the Node.js
// runtime wiring (see adapters/node-entry.ts).
export * from './index.ts'
import '../adapters/node-fs/program-wiring.ts'
