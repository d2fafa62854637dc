// The tool spec lives in the kernel (tools depend on the kernel, never the reverse); this
// re-export keeps older import paths working.
export * from '../kernel/tool-spec.ts'
