import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'
import { sampleProjectPlugin } from './sample-project-plugin.ts'

const root = fileURLToPath(new URL('.', import.meta.url))

/**
 * The web demo, built into the package (`dist/web-demo/`) by `npm run build`, served at `/` by
 * `isoagent serve` and as the Worker's static assets. QuickJS and isomorphic-git are dynamic
 * imports of the core, so they land in chunks of their own that load on first use. The sample
 * project (examples/sample-project and a `.git` of it) is the virtual module
 * `virtual:sample-project` (`sample-project-plugin.ts`), also loaded on first use.
 */
export default defineConfig({
  root,
  base: './',
  plugins: [sampleProjectPlugin()],
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/web-demo', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 2048,
    reportCompressedSize: false,
  },
})
