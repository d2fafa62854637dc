// The tree-sitter runtime and grammars as the Worker imports them (edge/cloudflare/tree-sitter.ts):
// wrangler's CompiledWasm rule makes each `.wasm` import a module workerd hands over compiled.
declare module 'web-tree-sitter/web-tree-sitter.wasm' {
  const module: WebAssembly.Module
  export default module
}
declare module '@vscode/tree-sitter-wasm/wasm/*.wasm' {
  const module: WebAssembly.Module
  export default module
}
