// The symbol channel's parser on Node.js: web-tree-sitter, its runtime WebAssembly and the
// grammars of `@vscode/tree-sitter-wasm` read from disk. Nothing is resolved, imported or read
// before the first parse (importing isoagent costs nothing, and cannot fail, for it).
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import {
  treeSitterSymbols,
  type SymbolExtractor,
  type TreeSitterGrammar,
  type TreeSitterLibrary,
} from '../../src/index.ts'

const require = createRequire(import.meta.url)

/** The path of a grammar's `.wasm` in `@vscode/tree-sitter-wasm`. */
export function treeSitterGrammarPath(name: TreeSitterGrammar): string {
  return require.resolve(`@vscode/tree-sitter-wasm/wasm/tree-sitter-${name}.wasm`)
}

let inner: SymbolExtractor | undefined
const extractor = (): SymbolExtractor =>
  (inner ??= treeSitterSymbols(
    async (): Promise<TreeSitterLibrary> => await import('web-tree-sitter'),
    {
      runtime: require.resolve('web-tree-sitter/web-tree-sitter.wasm'),
      grammar: async (name) => new Uint8Array(await readFile(treeSitterGrammarPath(name))),
    },
  ))

/**
 * Tree-sitter symbols on Node.js (the default of every Node entry): `web-tree-sitter` imported
 * on first use, its `.wasm` and the grammars read from `node_modules`.
 */
export const nodeTreeSitterSymbols: SymbolExtractor = {
  engine: 'tree_sitter',
  ready: async () => extractor().ready(),
  extract: async (path, text) => extractor().extract(path, text),
}
