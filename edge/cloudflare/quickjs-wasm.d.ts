// QuickJS's WebAssembly as the Worker imports it: wrangler makes a `.wasm` import a CompiledWasm
// module, which workerd hands over already compiled.
declare module '@jitl/quickjs-wasmfile-release-sync/wasm' {
  const module: WebAssembly.Module
  export default module
}
