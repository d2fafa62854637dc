import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { importQuickJs, type QuickJsLoader, type QuickJsWasm } from '../../src/index.ts'

let loaded: Promise<QuickJsWasm> | undefined

/**
 * QuickJS for the `program` tool on Node.js: reads `@jitl/quickjs-wasmfile-release-sync`'s
 * `.wasm` file and compiles it once per process; every QuickJS instance of every session then
 * instantiates that one module. Importing `isoagent/node` makes it the default loader.
 */
export const nodeQuickJs: QuickJsLoader = () => {
  loaded ??= (async () => {
    const file = createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm')
    const [{ variant }, bytes] = await Promise.all([importQuickJs(), readFile(file)])
    return { variant, module: await WebAssembly.compile(bytes) }
  })().catch((error: unknown) => {
    loaded = undefined
    throw error
  })
  return loaded
}
