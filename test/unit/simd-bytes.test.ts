import { readFileSync } from 'node:fs'
import { describe, expect, it, vi } from 'vitest'
import { GENERATED_PATH, generateSimdBytes } from '../../scripts/gen-simd-bytes.ts'
import {
  anchorFinder,
  byteFinder,
  byteNeedle,
  countLineEnds,
  horspoolFinder,
  vectorFinder,
  type ByteFinder,
  type ByteNeedle,
} from '../../src/tools/search/bytes/byte-search.ts'
import { inKernelMemory, searchBuffers } from '../../src/tools/search/bytes/simd-bytes.ts'

// The first call of this thread: the buffers the kernels search, as the scans get theirs.
const [kernelText, other] = searchBuffers([256 * 1024, 64 * 1024])!

/** A seeded generator of small integers. */
function random(seed: number) {
  let s = seed
  return (n: number) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return (s >>> 8) % n
  }
}

/** Bytes drawn mostly from a few letters (both cases), so needles recur; some newlines, high bytes. */
function randomBytes(rand: (n: number) => number, length: number): Uint8Array {
  const alphabet = [0x61, 0x62, 0x41, 0x42, 0x0a, 0x20, 0x5f, 0x7a, 0x5a, 0xc3, 0xa9, 0x00]
  const out = new Uint8Array(length)
  for (let i = 0; i < length; i++)
    out[i] = rand(10) === 0 ? rand(256) : alphabet[rand(alphabet.length)]!
  return out
}

/** Every match of `find` in `text` from `from`, one after another. */
function allMatches(find: ByteFinder, text: Uint8Array, from: number): number[] {
  const out: number[] = []
  for (let at = find(text, from); at !== -1; at = find(text, at + 1)) out.push(at)
  return out
}

/** `bytes` placed in the kernel memory at `offset`. */
function inKernel(bytes: Uint8Array, offset: number): Uint8Array {
  kernelText!.set(bytes, offset)
  return kernelText!.subarray(offset, offset + bytes.length)
}

describe('WebAssembly SIMD byte kernels', () => {
  it('are assembled from simd-bytes.wat as committed (run npm run gen:simd)', async () => {
    expect(readFileSync(GENERATED_PATH, 'utf8')).toBe(await generateSimdBytes())
  })

  it('run in Node: the first buffers lie in the kernel memory, later ones are not made there', () => {
    expect(inKernelMemory(kernelText!)).toBe(true)
    expect(inKernelMemory(other!)).toBe(true)
    expect(other!.byteOffset).toBeGreaterThanOrEqual(kernelText!.byteOffset + kernelText!.length)
    expect(searchBuffers([16])).toBeUndefined()
    expect(inKernelMemory(new Uint8Array(16))).toBe(false)
  })

  it('find every match the JavaScript finders find, folded or not, at every offset and length', () => {
    const rand = random(7)
    for (let round = 0; round < 1500; round++) {
      const text = randomBytes(rand, rand(5) === 0 ? 2000 + rand(3000) : rand(80))
      // Needles cut from the text (so they occur) or made up, 1 to 40 bytes.
      const n = 1 + rand(rand(4) === 0 ? 40 : 6)
      const start = text.length > n ? rand(text.length - n) : 0
      const raw = rand(3) === 0 ? randomBytes(rand, n) : text.slice(start, start + n)
      if (raw.length === 0) continue
      const fold = rand(2) === 0 && raw.every((b) => b < 0x80)
      // byteNeedle lower-cases a folded needle; one left as it is must match as byteMatches says.
      const lower = fold && rand(4) !== 0
      const needle: ByteNeedle = {
        bytes: lower
          ? raw.map((b) => ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x7a ? b | 0x20 : b))
          : raw,
        foldAsciiCase: fold,
        foldsNonAscii: false,
      }
      const vector = vectorFinder(needle)!
      const placed = inKernel(text, rand(64))
      const from = rand(4) === 0 ? rand(text.length + 2) : 0
      const want = allMatches(anchorFinder(needle).find, text, from)
      expect(allMatches(vector, placed, from), `round ${round}`).toEqual(want)
      if (needle.bytes.length >= 3)
        expect(allMatches(horspoolFinder(needle).find, text, from)).toEqual(want)
      // byteFinder takes the kernel for bytes in its memory, JavaScript for any other.
      const find = byteFinder(needle)
      expect(allMatches(find, placed, from)).toEqual(want)
      expect(allMatches(find, text, from)).toEqual(want)
    }
  })

  it('read nothing past a text that ends where the kernel memory ends', () => {
    // `other` is the memory's last bytes: a load past them would trap.
    const text = new Uint8Array(37).fill(0x61)
    text.set([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65], 31)
    const placed = other!.subarray(other!.length - 37)
    placed.set(text)
    expect(placed.byteOffset + placed.length).toBe(placed.buffer.byteLength)
    for (const finder of [byteFinder, vectorFinder]) {
      const find = (literal: string, fold: boolean) => finder(byteNeedle(literal, fold)!)!
      expect(find('needle', false)(placed, 0)).toBe(31)
      expect(find('NEEDLE', true)(placed, 0)).toBe(31)
      expect(find('needlee', false)(placed, 0)).toBe(-1)
      expect(find('a', false)(placed, 36)).toBe(-1)
    }
    const lines = other!.subarray(other!.length - 100)
    lines.fill(0x0a)
    expect(countLineEnds(lines, 0, 100)).toBe(100)
  })

  it('keep every finder right while many needles share and reuse the needle area', () => {
    // 40 needles of 2,000 bytes need more than the 64 KiB area: it is started over, and each
    // finder writes its needle again before its next search.
    const rand = random(11)
    const needles = Array.from({ length: 40 }, () => randomBytes(rand, 2000))
    const texts = needles.map((needle) => {
      const text = randomBytes(rand, 5000)
      text.set(needle, 1234)
      return text
    })
    const finders = needles.map((bytes) =>
      vectorFinder({ bytes, foldAsciiCase: false, foldsNonAscii: false })!,
    )
    for (let pass = 0; pass < 3; pass++)
      for (let k = 0; k < needles.length; k++) {
        const placed = inKernel(texts[k]!, 100)
        expect(finders[k]!(placed, 0)).toBe(
          anchorFinder({ bytes: needles[k]!, foldAsciiCase: false, foldsNonAscii: false }).find(
            texts[k]!,
            0,
          ),
        )
      }
  })

  it('leave needles over 4 KiB to JavaScript, with the same answers', () => {
    const rand = random(3)
    const bytes = randomBytes(rand, 5000)
    const needle = { bytes, foldAsciiCase: false, foldsNonAscii: false }
    expect(vectorFinder(needle)).toBeUndefined()
    const text = randomBytes(rand, 20000)
    text.set(bytes, 7777)
    expect(byteFinder(needle)(inKernel(text, 0), 0)).toBe(7777)
  })

  it('count line ends as the JavaScript count does, over every span', () => {
    const rand = random(5)
    // Over 255 × 16 bytes the lane counters are summed on the way.
    for (const length of [0, 1, 15, 16, 17, 63, 64, 65, 4079, 4080, 4081, 4096, 70_000]) {
      const text = randomBytes(rand, length)
      for (let k = 0; k < 20; k++) {
        const from = rand(length + 1)
        const to = from + rand(length - from + 1)
        const placed = inKernel(text, rand(32))
        expect(countLineEnds(placed, from, to), `${length} [${from}, ${to})`).toBe(
          countLineEnds(text, from, to),
        )
      }
    }
    const newlines = inKernel(new Uint8Array(100_000).fill(0x0a), 3)
    expect(countLineEnds(newlines, 0, 100_000)).toBe(100_000)
  })
})

describe('without WebAssembly', () => {
  it('scans give the same answers from plain buffers', async () => {
    vi.resetModules()
    vi.stubGlobal('WebAssembly', undefined)
    try {
      const simd = await import('../../src/tools/search/bytes/simd-bytes.ts')
      const search = await import('../../src/tools/search/bytes/byte-search.ts')
      expect(simd.searchBuffers([1024])).toBeUndefined()
      const needle = search.byteNeedle('needle', true)!
      expect(search.vectorFinder(needle)).toBeDefined()
      const text = new TextEncoder().encode('a\nNeedle\nb\n')
      expect(search.byteFinder(needle)(text, 0)).toBe(2)
      expect(search.countLineEnds(text, 0, text.length)).toBe(3)
    } finally {
      vi.unstubAllGlobals()
      vi.resetModules()
    }
  })
})
