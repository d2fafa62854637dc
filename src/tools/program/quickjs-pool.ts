import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core'
import type { QuickJsLoader, QuickJsWasm } from './quickjs-loader.ts'

/** Hard cap of a program's memory: the whole linear memory of its QuickJS instance. */
export const PROGRAM_MEMORY_BYTES = 64 * 1024 * 1024
const PAGE = 65_536
/** Pages an instance starts with (16 MiB); one that grew past them is not kept idle. */
const INITIAL_PAGES = 256
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
      initial: INITIAL_PAGES,
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

  /**
   * Take back an instance whose program ended. It is kept for the next program only when it is
   * healthy and its memory is still the size it started with: WebAssembly memory never shrinks,
   * so an instance a program grew would hold up to the whole cap while idle.
   */
  release(instance: QuickJsInstance, healthy: boolean): void {
    const grown = instance.memory.buffer.byteLength > INITIAL_PAGES * PAGE
    if (healthy && !grown && this.idle.length < MAX_IDLE) this.idle.push(instance)
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
