import type { SymbolDefinition, SymbolExtractor } from './symbol-extractor.ts'
import { SYMBOL_QUERIES, grammarOf, type TreeSitterGrammar } from './symbol-queries.ts'

/** A loaded grammar (`Language` of web-tree-sitter), opaque here. */
export interface TreeSitterLanguage {
  readonly name: string | null
}

/** One capture of a query: its name (here, the definition's kind) and the named node. */
export interface TreeSitterCapture {
  name: string
  node: { text: string; startPosition: { row: number } }
}

/** A syntax tree; `delete()` frees it. */
export interface TreeSitterTree {
  readonly rootNode: object
  delete(): void
}

/** A parser: set a language, parse text. */
export interface TreeSitterParser {
  setLanguage(language: TreeSitterLanguage | null): unknown
  parse(text: string): TreeSitterTree | null
}

/** A compiled query. */
export interface TreeSitterQuery {
  captures(node: never): TreeSitterCapture[]
}

/** Emscripten's hook to instantiate the runtime's module from one the host compiled. */
export type InstantiateWasm = (
  imports: WebAssembly.Imports,
  done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
) => WebAssembly.Exports

/**
 * The parts of the `web-tree-sitter` module (0.25+: `{ Parser, Language, Query }`) the symbol
 * channel uses. The host imports the library and passes it in; the core never imports it.
 */
export interface TreeSitterLibrary {
  Parser: {
    init(options?: {
      locateFile?: (name: string, scriptDirectory: string) => string
      instantiateWasm?: InstantiateWasm
    }): Promise<void>
    new (): TreeSitterParser
  }
  Language: {
    load(input: string | Uint8Array): Promise<TreeSitterLanguage>
    loadSync(module: WebAssembly.Module): TreeSitterLanguage
  }
  Query: new (language: never, source: string) => TreeSitterQuery
}

/** A grammar's WebAssembly: compiled (workerd), bytes, or a URL or path `Language.load` reads. */
export type GrammarWasm = WebAssembly.Module | Uint8Array | string

/**
 * Where the WebAssembly comes from. Each runtime has its own way:
 * - Node.js: nothing for `runtime` (the library reads the file beside it), grammar bytes read
 *   from `@vscode/tree-sitter-wasm/wasm/` (`isoagent/node` wires this as the default).
 * - Browsers: URLs of `web-tree-sitter.wasm` and the grammars (e.g. Vite `?url` imports).
 * - workerd, which compiles no WebAssembly from bytes: `.wasm` imports (compiled modules).
 */
export interface TreeSitterWasm {
  /** `web-tree-sitter.wasm`: a compiled module, or its URL. Absent: the library finds it. */
  runtime?: WebAssembly.Module | string
  /** A grammar's WebAssembly; `undefined`: no grammar here (those files use the regex). */
  grammar(name: TreeSitterGrammar): GrammarWasm | undefined | Promise<GrammarWasm | undefined>
}

const initialised = new WeakMap<object, Promise<void>>()

function initOnce(library: TreeSitterLibrary, runtime: TreeSitterWasm['runtime']): Promise<void> {
  let done = initialised.get(library.Parser)
  if (done === undefined) {
    done =
      runtime === undefined
        ? library.Parser.init()
        : typeof runtime === 'string'
          ? library.Parser.init({ locateFile: () => runtime })
          : library.Parser.init({
              instantiateWasm(imports, ready) {
                const instance = new WebAssembly.Instance(runtime, imports)
                ready(instance, runtime)
                return instance.exports
              },
            })
    initialised.set(library.Parser, done)
    done.catch(() => initialised.delete(library.Parser))
  }
  return done
}

interface LoadedGrammar {
  language: TreeSitterLanguage
  query: TreeSitterQuery
}

/**
 * The symbol channel's parser: tree-sitter through `web-tree-sitter`, with the definition queries
 * of TypeScript/TSX, JavaScript, Python, Go, Rust and Java. `library` is the imported
 * `web-tree-sitter` module (or a function importing it on first use); `wasm` says where its
 * WebAssembly comes from. A grammar that fails to load leaves its files to the regex.
 */
export function treeSitterSymbols(
  library: TreeSitterLibrary | (() => Promise<TreeSitterLibrary>),
  wasm: TreeSitterWasm,
): SymbolExtractor {
  let loaded: Promise<{ library: TreeSitterLibrary; parser: TreeSitterParser }> | undefined
  const grammars = new Map<TreeSitterGrammar, Promise<LoadedGrammar | undefined>>()
  const load = () => {
    if (loaded === undefined) {
      loaded = (async () => {
        const lib = typeof library === 'function' ? await library() : library
        await initOnce(lib, wasm.runtime)
        return { library: lib, parser: new lib.Parser() }
      })()
      loaded.catch(() => (loaded = undefined)) // a later call tries again
    }
    return loaded
  }
  const grammar = (name: TreeSitterGrammar) => {
    let entry = grammars.get(name)
    if (entry === undefined) {
      entry = load().then(async ({ library: lib }) => {
        const source = await wasm.grammar(name)
        if (source === undefined) return undefined
        const language =
          source instanceof WebAssembly.Module
            ? lib.Language.loadSync(source)
            : await lib.Language.load(source)
        return { language, query: new lib.Query(language as never, SYMBOL_QUERIES[name]) }
      })
      entry = entry.catch(() => undefined)
      grammars.set(name, entry)
    }
    return entry
  }
  return {
    engine: 'tree_sitter',
    ready: async () => {
      await load()
    },
    async extract(path, text) {
      const name = grammarOf(path)
      if (name === undefined) return undefined
      const { parser } = await load()
      const loadedGrammar = await grammar(name)
      if (loadedGrammar === undefined) return undefined
      return definitionsOf(parser, loadedGrammar, text)
    },
  }
}

/** Parse `text` and collect the captured names (synchronous: no other parse interleaves). */
function definitionsOf(
  parser: TreeSitterParser,
  grammar: LoadedGrammar,
  text: string,
): SymbolDefinition[] | undefined {
  parser.setLanguage(grammar.language)
  const tree = parser.parse(text)
  if (tree === null) return undefined
  try {
    return grammar.query.captures(tree.rootNode as never).map((c) => ({
      name: c.node.text,
      kind: c.name,
      line: c.node.startPosition.row + 1,
    }))
  } finally {
    tree.delete()
  }
}
