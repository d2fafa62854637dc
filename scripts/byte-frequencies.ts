// Measures how often each byte value occurs in the text files below a directory and prints the
// table in src/tools/search/bytes/byte-search.ts: for each of the 256 byte values, its occurrences per million
// bytes (at least 1). The grep byte prefilter picks how to look for a literal by these.
//
//   npx tsx scripts/byte-frequencies.ts node_modules
//
// Text files: those `rg --files` lists for common source, markup and data types, without a NUL
// in their first 8 KiB.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import * as nodePath from 'node:path'

const dir = process.argv[2]
if (dir === undefined) throw new Error('usage: byte-ranks.ts DIR')
const types = ['js', 'ts', 'json', 'md', 'py', 'rust', 'go', 'c', 'cpp', 'java', 'css', 'html']
const files = execFileSync('rg', ['--files', ...types.flatMap((t) => ['-t', t])], {
  cwd: dir,
  maxBuffer: 1 << 30,
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => f !== '')
const counts = new Float64Array(256)
let bytes = 0
for (const file of files) {
  const data = readFileSync(nodePath.join(dir, file))
  if (data.subarray(0, 8192).includes(0)) continue
  for (const b of data) counts[b]!++
  bytes += data.length
}
const perMillion = [...counts].map((c) => Math.max(1, Math.round((c / bytes) * 1e6)))
console.log(`// ${files.length} files, ${(bytes / 1e6).toFixed(0)} MB`)
for (let row = 0; row < 256; row += 16)
  console.log(`  ${perMillion.slice(row, row + 16).join(', ')},`)
