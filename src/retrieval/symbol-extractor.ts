/** A definition a parser found: its name, what it is and its 1-based line. */
export interface SymbolDefinition {
  name: string
  /** `function`, `method`, `class`, `interface`, `type`, `enum`, `module` … */
  kind: string
  /** 1-based line of the name. */
  line: number
}

/**
 * The port through which hybrid search's symbol channel gets definitions from a real parser.
 * `extract` answers the file's definitions, or `undefined` when it has no grammar for the file
 * (the channel then falls back to a regex over that file's chunks). A rejection of `ready()`
 * means the parser cannot load here: the whole channel falls back to the regex.
 *
 * Implementation: `treeSitterSymbols(loader)`; each runtime hands it the WebAssembly its own way
 * (see `TreeSitterWasm`). Node sets one as the default on import.
 */
export interface SymbolExtractor {
  /** Engine name reported in `metadata.channels.symbol` (e.g. `tree_sitter`). */
  readonly engine: string
  /** Loads the parser (once); rejects when it cannot load in this runtime. */
  ready(): Promise<void>
  extract(path: string, text: string): Promise<SymbolDefinition[] | undefined>
}

let defaultExtractor: SymbolExtractor | undefined

/**
 * Make `extractor` the one sessions use when `retrieval.symbols` names none (Node's runtime
 * wiring sets tree-sitter with grammars read from disk). `undefined`: the regex only.
 */
export function setDefaultSymbolExtractor(extractor: SymbolExtractor | undefined): void {
  defaultExtractor = extractor
}

/** The extractor sessions use when their options name none. */
export function defaultSymbolExtractor(): SymbolExtractor | undefined {
  return defaultExtractor
}
