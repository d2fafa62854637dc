#!/usr/bin/env node
// Launcher for the isoagent CLI (compiled to dist/ by `npm run build`, which `npm install` runs).
import { existsSync } from 'node:fs'

const compiled = new URL('../dist/bin/cli.js', import.meta.url)
if (!existsSync(compiled)) {
  process.stderr.write('isoagent: dist/ is missing; run `npm run build` first\n')
  process.exit(2)
}
const { main } = await import(compiled.href)
process.exitCode = await main(process.argv.slice(2))
