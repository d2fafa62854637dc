import { SIMD_BYTES_WASM } from './simd-bytes.generated.ts'
import { NEEDLE_AREA_BYTES, NEEDLE_MAX_BYTES } from '../tuning.ts'

// WebAssembly SIMD kernels (simd-bytes.wat) for the two byte searches a grep spends its time
// in: finding a literal and counting line ends. They read the thread's kernel memory, so they
// serve bytes read into buffers inside it ({@link searchBuffers}); any other bytes, and
// platforms that cannot compile WebAssembly at run time (workerd), take the JavaScript paths.

const PAGE_BYTES = 65536

interface Kernels {
  memory: WebAssembly.Memory
  bytes: Uint8Array
  count: (p: number, length: number) => number
  find: (
    text: number,
    length: number,
    from: number,
    needle: number,
    needleLength: number,
    i1: number,
    i2: number,
  ) => number
}

/** This thread's kernels, once {@link searchBuffers} made them; null when they cannot run here. */
let kernels: Kernels | null | undefined
/** The kernel memory's buffer: bytes in it are searched by the kernels. */
let kernelBuffer: ArrayBufferLike | undefined
/** Where the next needle goes, and how often the needle area has been reused. */
let needleAt = 0
let needleEpoch = 0

function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text)
  const out = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i)
  return out
}

function loadKernels(bytes: number): Kernels | null {
  try {
    // Compiled first: where that is refused, no memory is made.
    const module = new WebAssembly.Module(decodeBase64(SIMD_BYTES_WASM))
    const pages = Math.ceil((NEEDLE_AREA_BYTES + bytes) / PAGE_BYTES)
    // A fixed size: growing the memory would detach every view of it.
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages })
    const { exports } = new WebAssembly.Instance(module, { env: { memory } })
    return {
      memory,
      bytes: new Uint8Array(memory.buffer),
      count: exports.count as Kernels['count'],
      find: exports.find as Kernels['find'],
    }
  } catch {
    // No WebAssembly, no SIMD, or no compiling at run time (workerd, a strict CSP).
    return null
  }
}

/**
 * Buffers of `lengths` bytes in this thread's kernel memory, made for them on the first call,
 * for reads that are then searched in place (by {@link simdCountLineEnds} and the finders of
 * {@link simdFinder}). Undefined on later calls and where WebAssembly SIMD cannot run.
 */
export function searchBuffers(lengths: readonly number[]): Uint8Array[] | undefined {
  if (kernels !== undefined) return undefined
  const aligned = lengths.map((n) => Math.ceil(n / 16) * 16)
  kernels = loadKernels(aligned.reduce((sum, n) => sum + n, 0))
  if (kernels === null) return undefined
  const buffer = (kernelBuffer = kernels.memory.buffer)
  let at = NEEDLE_AREA_BYTES
  return lengths.map((n, k) => {
    const view = new Uint8Array(buffer, at, n)
    at += aligned[k]!
    return view
  })
}

/** Whether `bytes` lie in the kernel memory. */
export function inKernelMemory(bytes: Uint8Array): boolean {
  return bytes.buffer === kernelBuffer
}

/** How many bytes in `[from, to)` of `bytes` (which lie in the kernel memory) are `\n`. */
export function simdCountLineEnds(bytes: Uint8Array, from: number, to: number): number {
  return kernels!.count(bytes.byteOffset + from, to - from)
}

/**
 * A finder for `needle` in bytes in the kernel memory (only: see {@link inKernelMemory});
 * `masks[j]` is 0x20 where byte `j` is a lower-case ASCII letter matched in either case, else 0.
 * The kernel tests 16 places at a time by the bytes at `i1` and `i2` (pick the rarest).
 * Undefined for a needle too long for the needle area.
 */
export function simdFinder(
  needle: Uint8Array,
  masks: Uint8Array,
  i1: number,
  i2: number,
): ((text: Uint8Array, from: number) => number) | undefined {
  const n = needle.length
  if (n === 0 || n > NEEDLE_MAX_BYTES) return undefined
  let epoch = -1
  let at = 0
  return (text, from) => {
    const k = kernels!
    if (epoch !== needleEpoch) {
      if (needleAt + 2 * n > NEEDLE_AREA_BYTES) {
        // Start the area over: finders written before write themselves again when next used.
        needleEpoch++
        needleAt = 0
      }
      at = needleAt
      needleAt += 2 * n
      k.bytes.set(needle, at)
      k.bytes.set(masks, at + n)
      epoch = needleEpoch
    }
    return k.find(text.byteOffset, text.length, from < 0 ? 0 : from, at, n, i1, i2)
  }
}
