// The symbol channel's parser in the Worker: web-tree-sitter bundled, its runtime and the seven
// grammars imported as `.wasm` modules (wrangler.toml's CompiledWasm rule): workerd compiles no
// WebAssembly from bytes, so each arrives compiled. They add about 5.6 MiB raw, 0.7 MiB gzipped,
// to the upload (docs/http.md, "On Cloudflare Workers"). A grammar is instantiated on the first
// file that needs it.
import * as webTreeSitter from 'web-tree-sitter'
import runtime from 'web-tree-sitter/web-tree-sitter.wasm'
import go from '@vscode/tree-sitter-wasm/wasm/tree-sitter-go.wasm'
import java from '@vscode/tree-sitter-wasm/wasm/tree-sitter-java.wasm'
import javascript from '@vscode/tree-sitter-wasm/wasm/tree-sitter-javascript.wasm'
import python from '@vscode/tree-sitter-wasm/wasm/tree-sitter-python.wasm'
import rust from '@vscode/tree-sitter-wasm/wasm/tree-sitter-rust.wasm'
import tsx from '@vscode/tree-sitter-wasm/wasm/tree-sitter-tsx.wasm'
import typescript from '@vscode/tree-sitter-wasm/wasm/tree-sitter-typescript.wasm'
import {
  treeSitterSymbols,
  type SymbolExtractor,
  type TreeSitterGrammar,
  type TreeSitterLibrary,
} from '../../adapters/index.ts'

const GRAMMARS: Record<TreeSitterGrammar, WebAssembly.Module> = {
  typescript,
  tsx,
  javascript,
  python,
  go,
  rust,
  java,
}

/** Tree-sitter definitions for the Worker's sessions (`metadata.channels.symbol`: `tree_sitter`). */
export const workerTreeSitterSymbols: SymbolExtractor = treeSitterSymbols(
  webTreeSitter as TreeSitterLibrary,
  { runtime, grammar: (name) => GRAMMARS[name] },
)
