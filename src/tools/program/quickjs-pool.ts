import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core'
import type { QuickJsLoader, QuickJsWasm } from './quickjs-loader.ts'

/** Hard cap of a program's memory: the whole linear memory of its QuickJS instance. */
export const PROGRAM_MEMORY_BYTES = 64 * 1024 * 1024
const PAGE = 65_536
/** Instances kept ready between programs (each may hold up to the cap). */
const MAX_IDLE = 2

/** One QuickJS instance over its own fixed-size memory. */
export interface QuickJsInstance {
  module: QuickJSWASMModule
  memory: WebAssembly.Memory
}

/**
 * Instances of one loader's QuickJS. A program takes one to itself (so each has the whole cap),
 * gives it back when it ends cleanly and drops it otherwise (out of memory, a failed disposal).
 */
export class QuickJsPool {
  private wasm: Promise<QuickJsWasm> | undefined
  private readonly idle: QuickJsInstance[] = []

  constructor(private readonly loader: QuickJsLoader) {}

  async acquire(): Promise<QuickJsInstance> {
    const ready = this.idle.pop()
    if (ready !== undefined) return ready
    this.wasm ??= this.loader().catch((error: unknown) => {
      this.wasm = undefined
      throw error
    })
    const wasm = await this.wasm
    const memory = new WebAssembly.Memory({
      initial: 256,
      maximum: PROGRAM_MEMORY_BYTES / PAGE,
    })
    const variant = newVariant(wasm.variant, {
      wasmMemory: memory,
      // The interpreter's own messages (an abort of a broken instance) are not the host's output.
      emscriptenModule: { print: ignore, printErr: ignore } as never,
      ...(wasm.module !== undefined ? { wasmModule: wasm.module } : {}),
    })
    return { module: await newQuickJSWASMModuleFromVariant(variant), memory }
  }

  release(instance: QuickJsInstance, healthy: boolean): void {
    if (healthy && this.idle.length < MAX_IDLE) this.idle.push(instance)
  }

  /** Instances waiting for a program (for tests and benchmarks). */
  get idleCount(): number {
    return this.idle.length
  }
}

const ignore = () => {}

const pools = new WeakMap<QuickJsLoader, QuickJsPool>()

/** The pool shared by every session using `loader`. */
export function poolFor(loader: QuickJsLoader): QuickJsPool {
  let pool = pools.get(loader)
  if (pool === undefined) {
    pool = new QuickJsPool(loader)
    pools.set(loader, pool)
  }
  return pool
}
