// Bundles an entry the way a Worker or browser build would: one ESM file, platform-neutral, with
// Node built-ins forbidden. A `node:*` import or a bare Node built-in (`fs`, `crypto`, ...) anywhere
// in the graph makes the build FAIL, so a bundle that builds is proof the code needs no Node.
import { builtinModules, createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type Plugin } from 'esbuild'

/** Repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** Which runtime the bundle is for: decides the package.json export conditions. */
export type BundleTarget = 'workerd' | 'browser'

export type BundleInput =
  /** A file, absolute or relative to the repository root. */
  | { entry: string; target: BundleTarget }
  /** Module source; its relative imports resolve against `resolveDir`. */
  | { contents: string; resolveDir: string; target: BundleTarget }

/** Extra bundling options. */
export interface BundleOptions {
  /** esbuild plugins that run before the Node built-in check (test shims standing in for modules). */
  plugins?: Plugin[]
}

const CONDITIONS: Record<BundleTarget, string[]> = {
  // What wrangler resolves for Workers.
  workerd: ['workerd', 'worker', 'browser'],
  browser: ['browser'],
}

// Package fields that name the entry: a browser build prefers a package's `browser` file, as
// esbuild's and Vite's browser builds do (lightning-fs's text encoder has a Buffer-based `main`).
const MAIN_FIELDS: Record<BundleTarget, string[]> = {
  workerd: ['module', 'main'],
  browser: ['browser', 'module', 'main'],
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const builtinNames = builtinModules.filter((m) => !m.startsWith('_'))
const NODE_BUILTIN = new RegExp(`^(node:.*|(${builtinNames.map(escapeRegExp).join('|')})(/.*)?)$`)

/** Fails the build on any import of a Node built-in, naming the importer. */
export const forbidNodeBuiltins: Plugin = {
  name: 'forbid-node-builtins',
  setup(b) {
    b.onResolve({ filter: NODE_BUILTIN }, (args) => ({
      errors: [
        {
          text: `Node built-in "${args.path}" imported by ${args.importer || '<entry>'}: the isomorphic build must not depend on Node`,
        },
      ],
    }))
  },
}

/**
 * What browser bundlers (esbuild `platform: 'browser'`, Vite, wrangler) do for the two npm packages
 * isomorphic-git's SHA-1 fallback (sha.js) pulls in: `buffer` resolves to the npm `buffer`
 * package (a dependency of isoagent), and `inherits` to its `browser` file, which needs no `util`.
 * Anything else that names a Node built-in still fails the build.
 */
export const browserPackages: Plugin = {
  name: 'browser-packages',
  setup(b) {
    const require = createRequire(import.meta.url)
    b.onResolve({ filter: /^buffer(\/|\/index\.js)?$/ }, () => ({
      path: require.resolve('buffer/index.js', { paths: [ROOT] }),
    }))
    b.onResolve({ filter: /^inherits$/ }, () => ({
      path: require.resolve('inherits/inherits_browser.js', { paths: [ROOT] }),
    }))
  },
}

/** Bundle `input` into one ESM module and return its code. Throws when the build fails. */
export async function bundle(input: BundleInput, options: BundleOptions = {}): Promise<string> {
  const result = await build({
    ...('entry' in input
      ? { entryPoints: [resolve(ROOT, input.entry)] }
      : {
          stdin: {
            contents: input.contents,
            resolveDir: input.resolveDir,
            sourcefile: 'smoke-entry.ts',
            loader: 'ts' as const,
          },
        }),
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    mainFields: MAIN_FIELDS[input.target],
    conditions: CONDITIONS[input.target],
    target: 'es2022',
    minify: false,
    sourcemap: false,
    logLevel: 'silent',
    plugins: [...(options.plugins ?? []), browserPackages, forbidNodeBuiltins],
  })
  const [file] = result.outputFiles
  if (file === undefined || result.outputFiles.length !== 1) {
    throw new Error(`esbuild produced ${result.outputFiles.length} files, expected 1`)
  }
  return file.text
}

/** `node:` module specifiers in import/export/require/import() positions of bundled code. */
export function nodeSpecifiers(code: string): string[] {
  const found = new Set<string>()
  const patterns = [
    /\bfrom\s*["'](node:[^"']+)["']/g,
    /\bimport\s*["'](node:[^"']+)["']/g,
    /\bimport\s*\(\s*["'](node:[^"']+)["']\s*\)/g,
    /\brequire\s*\(\s*["'](node:[^"']+)["']\s*\)/g,
  ]
  for (const pattern of patterns) for (const m of code.matchAll(pattern)) found.add(m[1]!)
  return [...found].sort()
}
