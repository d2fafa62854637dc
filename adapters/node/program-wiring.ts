// The program tool's Node.js wiring: QuickJS compiled once per process from the variant's .wasm
// file, and guests run in worker threads that are terminated at their deadline. Imported by every
// Node entry of the package (`isoagent/node`, `isoagent/edge/node`, and the `node` condition of
// the others), so a process gets it whichever entry it imports.
import { setDefaultProgramRunner, setDefaultQuickJsLoader } from '../../src/index.ts'
import { nodeProgramRunner } from './node-program-runner.ts'
import { nodeQuickJs } from './node-quickjs.ts'

setDefaultQuickJsLoader(nodeQuickJs)
setDefaultProgramRunner(nodeProgramRunner)
