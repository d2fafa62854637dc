// Measures how often each byte value occurs in the text files below a directory and prints the
// table in src/text/byte-ranks.ts: 256 ranks, 0 for the rarest byte, 255 for the most common.
// The grep byte prefilter anchors a literal on its rarest byte, so fewer places are checked.
//
//   npx tsx scripts/byte-ranks.ts node_modules > /tmp/ranks.txt
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
const order = [...counts.keys()].sort((a, b) => counts[a]! - counts[b]! || a - b)
const ranks = new Array<number>(256)
order.forEach((byte, rank) => (ranks[byte] = rank))
console.log(`// ${files.length} files, ${(bytes / 1e6).toFixed(0)} MB`)
for (let row = 0; row < 256; row += 16) console.log(`  ${ranks.slice(row, row + 16).join(', ')},`)
