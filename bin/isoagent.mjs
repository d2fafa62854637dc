#!/usr/bin/env node
// Launcher for the isoagent CLI, bundled into dist/cli/ by `npm run build` (which `npm install`
// and `npm pack` run).
import { existsSync } from 'node:fs'
import module from 'node:module'

const bundled = new URL('../dist/cli/isoagent.js', import.meta.url)
if (!existsSync(bundled)) {
  process.stderr.write('isoagent: dist/ is missing; run `npm run build` first\n')
  process.exit(2)
}
// Node 22.1+: keep V8's compiled code of the bundle between runs (in the OS temp directory).
module.enableCompileCache?.()
const { main } = await import(bundled.href)
process.exitCode = await main(process.argv.slice(2))
