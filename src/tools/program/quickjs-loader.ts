import type { QuickJSSyncVariant } from 'quickjs-emscripten-core'

/**
 * QuickJS for the `program` tool: the sync release variant of quickjs-emscripten
 * (`@jitl/quickjs-wasmfile-release-sync`, its default export) and, where the runtime has it at
 * hand, its WebAssembly module already compiled. The core never compiles WebAssembly itself:
 * without `module`, the variant's own Emscripten loader finds and instantiates its `.wasm` (from
 * the file beside it on Node, by `fetch` relative to its URL in a browser).
 */
export interface QuickJsWasm {
  variant: QuickJSSyncVariant
  /** `emscripten-module.wasm` of the same variant version, compiled by the runtime. */
  module?: WebAssembly.Module
}

/**
 * The port through which a runtime hands QuickJS to the `program` tool. Called at most once per
 * loader (the result is kept); a rejection fails the program calls with a typed `unsupported`
 * result and is retried on the next call. Each runtime gives it its own way:
 * - Node.js: `nodeQuickJs()` from `isoagent/node` (reads the file, compiles it once); importing
 *   `isoagent/node` makes it the default.
 * - Browsers and bundlers: {@link importQuickJs} (the default), or {@link quickJsFromModule} with
 *   `WebAssembly.compileStreaming(fetch(url))`.
 * - workerd / Cloudflare Workers, which compile no WebAssembly from bytes:
 *   `import wasm from '@jitl/quickjs-wasmfile-release-sync/wasm'` (a `CompiledWasm` module) and
 *   pass `quickjs: wasm` in the session options.
 */
export type QuickJsLoader = () => Promise<QuickJsWasm>

async function importVariant(): Promise<QuickJSSyncVariant> {
  const imported = (await import('@jitl/quickjs-wasmfile-release-sync')) as unknown as {
    default?: QuickJSSyncVariant
  } & QuickJSSyncVariant
  return imported.default ?? imported
}

/**
 * The default loader: imports the variant package and lets its loader find the `.wasm` (Node.js,
 * and bundlers that emit the asset beside the bundle, as Vite does).
 */
export const importQuickJs: QuickJsLoader = async () => ({ variant: await importVariant() })

const fromModule = new WeakMap<WebAssembly.Module, QuickJsLoader>()

/** A loader over a module the runtime compiled or imported (workerd's `CompiledWasm`). */
export function quickJsFromModule(module: WebAssembly.Module): QuickJsLoader {
  let loader = fromModule.get(module)
  if (loader === undefined) {
    loader = async () => ({ variant: await importVariant(), module })
    fromModule.set(module, loader)
  }
  return loader
}

let defaultLoader: QuickJsLoader = importQuickJs

/**
 * Make `loader` the one sessions use when their options name none (`isoagent/node` sets its
 * file loader on import).
 */
export function setDefaultQuickJsLoader(loader: QuickJsLoader): void {
  defaultLoader = loader
}

/** The loader sessions use when their options name none. */
export function defaultQuickJsLoader(): QuickJsLoader {
  return defaultLoader
}
