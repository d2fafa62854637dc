/**
 * Bundles the CLI into dist/cli/: `isoagent.js` (bin/cli.ts with everything it imports) and
 * `scan-worker.js` (the local workspace's search worker, which the bundled scan pool starts from
 * beside itself), plus the `chunk-*.js` files they share and the ones behind dynamic imports
 * (`serve`, isomorphic-git, RE2, ...), which load only when a call needs them. A few minified
 * files start several times faster than the ~100 modules of dist/ they replace (no resolving,
 * reading and linking of each). Part of `npm run build`.
 */
import { build } from 'esbuild'
import { rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))

// Chunk names carry a content hash: clear the chunks of earlier builds.
rmSync(new URL('../dist/cli', import.meta.url), { recursive: true, force: true })

// The CLI and the worker entries are bundled apart: bundled together, every module a worker
// shares with the CLI became a chunk of its own, and the CLI started by resolving and loading
// ~17 small files. Apart, the CLI's start-up code is a few chunks (plus the lazy ones); each
// worker carries its own copy of what it needs (a worker is a separate module graph anyway).
const common = {
  absWorkingDir: root,
  outdir: 'dist/cli',
  bundle: true,
  minify: true,
  platform: 'node',
  format: 'esm',
  splitting: true,
  target: 'node20',
  // CommonJS dependencies (isomorphic-git, the AWS SDK) call require() for Node built-ins.
  banner: {
    js: "import { createRequire as __isoagentRequire } from 'node:module'; const require = __isoagentRequire(import.meta.url);",
  },
  logLevel: 'warning',
} as const
await build({ ...common, entryPoints: { isoagent: 'bin/cli.ts' } })
await build({
  ...common,
  entryPoints: {
    'scan-worker': 'adapters/node/scan-worker.ts',
    'program-worker': 'adapters/node/program-worker.ts',
  },
})
