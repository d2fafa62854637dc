// `isoagent` on Node.js (the package's `node` export condition): exactly the `isoagent` entry,
// plus the Node.js runtime wiring, so the runtime decides and not which module came first
// (DESIGN, "Runtime wiring"): `program` guests run in killable worker threads.
export * from './index.ts'
import './node-fs/program-wiring.ts'
