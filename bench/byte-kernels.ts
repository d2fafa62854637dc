// Byte search kernels: how grep finds a literal and counts line ends in bytes it has read.
//
// On 12 MiB of this repository's node_modules text files (files up to 1 MiB, concatenated) in
// the scan's own buffer (the WebAssembly SIMD kernels' memory, src/tools/search/bytes/simd-bytes.wat):
//
// 1. Every occurrence of a literal: our finder against Node's `Buffer.prototype.indexOf` with the
//    literal (C++). In the kernel memory our finder is the SIMD kernel, unless memchr on a rare
//    byte of the literal is cheaper still; elsewhere it is JavaScript (a rarest-byte anchor found
//    by memchr, or Horspool), which is measured too.
// 2. Counting line ends: ours (the SIMD kernel; the JavaScript count before) against a loop of
//    `Buffer.prototype.indexOf(0x0a)`, i.e. memchr from one line end to the next.
//
//   npx tsx bench/byte-kernels.ts
import { Buffer } from 'node:buffer'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import * as nodePath from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  byteFinder,
  byteNeedle,
  countLineEnds,
  type ByteFinder,
} from '../src/tools/search/bytes/byte-search.ts'
import { MEMCHR_INDEX } from '../adapters/node/local-files.ts'
import { inKernelMemory, searchBuffers } from '../src/tools/search/bytes/simd-bytes.ts'
import {
  compare,
  formatSpread,
  formatThroughputTable,
  machineLine,
  sinkValue,
  type Row,
  type ThroughputRow,
} from './harness.ts'

const ROOT = fileURLToPath(new URL('../node_modules', import.meta.url))
const CORPUS_BYTES = 12 * 1024 * 1024
const LITERALS = ['deprecated', 'prototype', 'zqxzqxjj'] as const

/** Text files (no NUL in their first 8 KiB) up to 1 MiB, walked in name order, until `limit`. */
function corpus(limit: number): Buffer {
  const parts: Buffer[] = []
  let size = 0
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (size >= limit) return
      const path = nodePath.join(dir, name)
      const s = statSync(path, { throwIfNoEntry: false })
      if (s === undefined) continue
      if (s.isDirectory()) walk(path)
      else if (s.isFile() && s.size <= 1024 * 1024) {
        const bytes = readFileSync(path)
        if (bytes.subarray(0, 8192).includes(0)) continue
        parts.push(bytes)
        size += bytes.length
      }
    }
  }
  walk(ROOT)
  return Buffer.concat(parts).subarray(0, limit)
}

function findAll(find: ByteFinder, text: Uint8Array): number {
  let n = 0
  for (let at = find(text, 0); at !== -1; at = find(text, at + 1)) n++
  return n
}

function indexOfAll(text: Buffer, needle: Buffer): number {
  let n = 0
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) n++
  return n
}

function memchrLines(text: Buffer): number {
  let n = 0
  for (let at = text.indexOf(0x0a); at !== -1; at = text.indexOf(0x0a, at + 1)) n++
  return n
}

async function main() {
  const [, whole] = searchBuffers([1024 * 1024, CORPUS_BYTES]) ?? []
  if (whole === undefined || !inKernelMemory(whole))
    throw new Error('the SIMD kernels do not run here')
  const plain = corpus(CORPUS_BYTES)
  whole.set(plain)
  const inKernel = whole.subarray(0, plain.length)
  console.log(`# byte kernels · ${machineLine()}`)
  console.log(`corpus: ${(plain.length / 1e6).toFixed(1)} MB of node_modules text files\n`)

  const rows: ThroughputRow[] = []
  const measure = async (row: Promise<Row>) => {
    const done = { ...(await row), bytes: plain.length }
    rows.push(done)
    console.log(`  measured: ${done.operation}`)
  }
  for (const literal of LITERALS) {
    const needle = Buffer.from(literal)
    // As the local workspace has it: single bytes by memchr (Buffer.prototype.indexOf).
    const find = byteFinder(byteNeedle(literal, false)!, MEMCHR_INDEX)
    const want = indexOfAll(plain, needle)
    if (findAll(find, inKernel) !== want || findAll(find, plain) !== want)
      throw new Error(`finders disagree on ${literal}`)
    await measure(
      compare(
        `find \`${literal}\` (${want}×), in the kernel memory`,
        () => findAll(find, inKernel),
        () => indexOfAll(plain, needle),
      ),
    )
    await measure(
      compare(
        `find \`${literal}\`, elsewhere (JavaScript)`,
        () => findAll(find, plain),
        () => indexOfAll(plain, needle),
      ),
    )
  }
  const lines = memchrLines(plain)
  if (countLineEnds(inKernel, 0, inKernel.length) !== lines) throw new Error('counts disagree')
  const countRows: ThroughputRow[] = []
  for (const [name, text] of [
    ['SIMD kernel', inKernel],
    ['JavaScript', plain],
  ] as const) {
    const row = await compare(
      `count ${lines} line ends, ${name}`,
      () => countLineEnds(text, 0, text.length),
      () => memchrLines(plain),
    )
    countRows.push({ ...row, bytes: plain.length })
    console.log(`  measured: ${row.operation}`)
  }
  console.log()
  console.log(formatThroughputTable(rows, 'Buffer#indexOf'))
  console.log()
  console.log(formatThroughputTable(countRows, 'indexOf(0x0a) loop'))
  console.log()
  console.log('ratio = ours / peer, median of the per-round ratios. Rounds:')
  console.log(formatSpread([...rows, ...countRows]))
  if (sinkValue() < 0) console.log('(unreachable)')
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
