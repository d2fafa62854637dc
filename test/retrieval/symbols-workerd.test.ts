// The tree-sitter symbol channel inside workerd (Miniflare): web-tree-sitter bundled (Node
// built-ins forbidden), its runtime and grammars given as compiled `.wasm` modules (workerd
// compiles no WebAssembly from bytes). Its definitions must equal Node's for every fixture, and a
// hybrid search there must report `tree_sitter` and find the Java method the regex misses.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Plugin } from 'esbuild'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TREE_SITTER_GRAMMARS } from '../../adapters/index.ts'
import { nodeTreeSitterSymbols, treeSitterGrammarPath } from '../../adapters/node/index.ts'
import { bundle, nodeSpecifiers } from '../runtime/bundle.ts'
import { SYMBOL_SOURCES } from './symbol-fixtures.ts'

const require = createRequire(import.meta.url)

const WORKER = `
import * as library from 'web-tree-sitter'
import runtime from './web-tree-sitter.wasm'
${TREE_SITTER_GRAMMARS.map((g) => `import ${g} from './tree-sitter-${g}.wasm'`).join('\n')}
import { Agent, memoryWorkspace, treeSitterSymbols } from '../../adapters/index.ts'
import { SYMBOL_SOURCES } from './symbol-fixtures.ts'

const grammars = { ${TREE_SITTER_GRAMMARS.join(', ')} }
const symbols = treeSitterSymbols(library, { runtime, grammar: (name) => grammars[name] })

// A deterministic embedder (the port, in the Worker): words hashed onto 16 dimensions.
const embeddings = {
  provider: 'in-worker', model: 'hash16', dimension: 16, normalization: 'none',
  async embed(inputs) {
    return { vectors: inputs.map(({ id, text }) => {
      const values = new Array(16).fill(0.01)
      for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) values[w.length % 16] += 1
      return { id, values }
    }) }
  },
}

export default {
  async fetch() {
    try {
      const extracted = {}
      for (const [path, text] of Object.entries(SYMBOL_SOURCES))
        extracted[path] = await symbols.extract(path, text)
      const session = await Agent.create().session(
        memoryWorkspace({
          'app/Shop.java': 'class Shop {\\n  public void restock() {}\\n}\\n',
          'src/notes.ts': '// the function restock moved to Shop.java\\nexport const note = 1\\n',
        }),
        { retrieval: { embeddings, readinessTimeoutMs: 10000, symbols } },
      )
      const r = await session.tool('search', { mode: 'hybrid', query: 'restock' })
      await session.close()
      return Response.json({ userAgent: navigator.userAgent, extracted, hybrid: r.metadata })
    } catch (error) {
      return new Response(String(error && error.stack ? error.stack : error), { status: 500 })
    }
  },
}
`

/** `.wasm` imports stay imports (Miniflare gives them as CompiledWasm modules). */
const wasmExternal: Plugin = {
  name: 'wasm-external',
  setup(b) {
    b.onResolve({ filter: /\.wasm$/ }, (args) => ({ path: args.path, external: true }))
  },
}

/**
 * web-tree-sitter's Emscripten glue names `fs`, `fs/promises` and `module` on its Node path only
 * (never taken in workerd); wrangler leaves them to `nodejs_compat`, here they are empty.
 */
const emptyNodePaths: Plugin = {
  name: 'empty-node-paths',
  setup(b) {
    b.onResolve({ filter: /^(fs|fs\/promises|module)$/ }, (args) => ({
      path: args.path,
      namespace: 'empty',
    }))
    b.onLoad({ filter: /.*/, namespace: 'empty' }, () => ({ contents: 'export default {}' }))
  },
}

type Extracted = Record<string, { name: string; kind: string; line: number }[] | undefined>
interface Answer {
  userAgent: string
  extracted: Extracted
  hybrid: {
    channels: Record<string, string>
    results: { path: string; channels: Record<string, number> }[]
  }
}

describe('tree-sitter symbols inside workerd (Miniflare)', () => {
  let mf: Miniflare | undefined
  let code: string
  let answer: Answer

  beforeAll(async () => {
    code = await bundle(
      { contents: WORKER, resolveDir: import.meta.dirname, target: 'workerd' },
      { plugins: [wasmExternal, emptyNodePaths] },
    )
    const wasm = (path: string, file: string) => ({
      type: 'CompiledWasm' as const,
      path,
      contents: readFileSync(file),
    })
    mf = new Miniflare({
      modules: [
        { type: 'ESModule', path: 'worker.mjs', contents: code },
        wasm('web-tree-sitter.wasm', require.resolve('web-tree-sitter/web-tree-sitter.wasm')),
        ...TREE_SITTER_GRAMMARS.map((g) => wasm(`tree-sitter-${g}.wasm`, treeSitterGrammarPath(g))),
      ],
      compatibilityDate: '2026-04-01',
      host: '127.0.0.1',
      port: 0,
      cf: false,
      telemetry: { enabled: false },
    })
    const response = await mf.dispatchFetch('http://127.0.0.1/')
    const body = await response.text()
    if (response.status !== 200) throw new Error(`worker answered ${response.status}: ${body}`)
    answer = JSON.parse(body) as Answer
  }, 180_000)

  afterAll(async () => {
    await mf?.dispose()
  })

  it('bundles with no Node built-in and runs in workerd', () => {
    expect(nodeSpecifiers(code)).toEqual([])
    expect(answer.userAgent).toBe('Cloudflare-Workers')
  })

  it('finds exactly the definitions Node finds, in every grammar', async () => {
    const inNode: Extracted = {}
    for (const [path, text] of Object.entries(SYMBOL_SOURCES))
      inNode[path] = await nodeTreeSitterSymbols.extract(path, text)
    expect(Object.values(answer.extracted).every((d) => (d?.length ?? 0) > 0)).toBe(true)
    expect(answer.extracted).toEqual(inNode)
  })

  it('hybrid search there uses tree-sitter: the Java method, not the comment', () => {
    expect(answer.hybrid.channels.symbol).toBe('tree_sitter')
    const bySymbol = answer.hybrid.results.filter((h) => h.channels.symbol !== undefined)
    expect(bySymbol.map((h) => h.path)).toEqual(['app/Shop.java'])
  })
})
