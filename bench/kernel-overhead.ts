// Kernel overhead: the per-call cost of going through a session (schema validation, path
// containment, the call registry and abort wiring, the tool's own stat + streamed line window +
// numbered rendering + metadata) against the least work that yields the same text: a direct
// adapter read of the file plus UTF-8 decoding, or a direct `workspace.list`.
//
//   npx tsx bench/kernel-overhead.ts      (or `npm run bench`)
import { Agent, memoryWorkspace, WorkspacePath, type ToolResult } from '../adapters/index.ts'
import { compare, formatSpread, formatTable, machineLine, sinkValue, type Row } from './harness.ts'

const SMALL_LINES = 20
const LARGE_LINES = 2000
const BATCH_FILES = 8
const DIR_ENTRIES = 200
const DIR_SUBDIRS = 20

/** A deterministic line of TypeScript-like text, 44 to 95 characters. */
function sourceLine(file: number, line: number): string {
  const indent = '  '.repeat((line * 7 + file) % 4)
  const name = `value${file}_${line}`
  const pad = 'x'.repeat((line * 13 + file * 5) % 40)
  return `${indent}const ${name} = compute(${line}, '${pad}') // line ${line + 1}`
}

function sourceFile(file: number, lines: number): string {
  return Array.from({ length: lines }, (_, i) => sourceLine(file, i)).join('\n') + '\n'
}

function fixture(): Record<string, string> {
  const files: Record<string, string> = {
    'src/small.ts': sourceFile(0, SMALL_LINES),
    'src/large.ts': sourceFile(1, LARGE_LINES),
  }
  for (let i = 0; i < BATCH_FILES; i++) files[`batch/file${i}.ts`] = sourceFile(10 + i, SMALL_LINES)
  // DIR_ENTRIES entries in `wide/`: plain files, plus DIR_SUBDIRS subdirectories holding a file.
  for (let i = 0; i < DIR_ENTRIES; i++) {
    const name = `entry${String(i).padStart(3, '0')}`
    if (i % (DIR_ENTRIES / DIR_SUBDIRS) === 0) files[`wide/${name}/index.ts`] = 'export {}\n'
    else files[`wide/${name}.ts`] = `export const n = ${i}\n`
  }
  return files
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`kernel-overhead: ${message}`)
}

function expectOk(result: ToolResult, what: string): ToolResult {
  check(result.exitCode === 0, `${what} failed: ${result.output}`)
  return result
}

async function main(): Promise<void> {
  const files = fixture()
  const workspace = memoryWorkspace(files)
  const session = await Agent.create().session(workspace)
  // The tool refuses invalid UTF-8, so the peer decodes strictly as well.
  const decoder = new TextDecoder('utf-8', { fatal: true })

  const directRead = async (path: string): Promise<string> =>
    decoder.decode(await workspace.read(WorkspacePath.parse(path)))

  const batchPaths = Array.from({ length: BATCH_FILES }, (_, i) => `batch/file${i}.ts`)
  const batchArgs = { files: batchPaths.map((path) => ({ path })) }

  // Both sides must do the work being compared: check once, before anything is timed.
  const small = expectOk(await session.tool('read', { file_path: 'src/small.ts' }), 'read small')
  check(small.output.split('\n').length === SMALL_LINES, 'small read is not the whole file')
  const large = expectOk(await session.tool('read', { file_path: 'src/large.ts' }), 'read large')
  check(large.output.split('\n').length === LARGE_LINES, 'large read is not the whole file')
  check(
    large.output.endsWith(sourceLine(1, LARGE_LINES - 1)),
    'large read does not end with the last line',
  )
  check((await directRead('src/large.ts')) === files['src/large.ts'], 'direct read differs')
  const batch = expectOk(await session.tool('read', batchArgs), 'read batch')
  const status = (batch.metadata as { batch?: { status?: string } }).batch?.status
  check(status === 'complete', `batch read is ${status}, not complete`)
  const ls = expectOk(await session.tool('ls', { path: 'wide' }), 'ls')
  check(ls.output.split('\n').length === DIR_ENTRIES, 'ls did not list every entry on one page')
  const direct = await workspace.list(WorkspacePath.parse('wide'))
  check(direct.entries.length === DIR_ENTRIES, 'direct list is not every entry')

  console.log('Kernel overhead: session.tool(...) on a memory workspace vs the direct adapter call')
  console.log(machineLine())
  console.log()

  const rows: Row[] = []
  const run = async (row: Promise<Row>) => {
    const done = await row
    rows.push(done)
    console.log(`  measured: ${done.operation}`)
  }

  await run(
    compare(
      `read ${SMALL_LINES}-line file`,
      () => session.tool('read', { file_path: 'src/small.ts' }),
      () => directRead('src/small.ts'),
    ),
  )
  await run(
    compare(
      `read ${LARGE_LINES}-line file`,
      () => session.tool('read', { file_path: 'src/large.ts' }),
      () => directRead('src/large.ts'),
    ),
  )
  await run(
    compare(
      `read files batch (${BATCH_FILES} × ${SMALL_LINES} lines)`,
      () => session.tool('read', batchArgs),
      async () => {
        const texts: string[] = []
        for (const path of batchPaths) texts.push(await directRead(path))
        return texts.join('')
      },
    ),
  )
  await run(
    compare(
      `ls ${DIR_ENTRIES}-entry directory`,
      () => session.tool('ls', { path: 'wide' }),
      () => workspace.list(WorkspacePath.parse('wide')),
    ),
  )

  await session.close()

  console.log()
  console.log(formatTable(rows, 'direct'))
  console.log()
  console.log('ratio = ours / direct, median of the per-round ratios. Rounds:')
  console.log(formatSpread(rows))
  if (sinkValue() < 0) console.log('(unreachable)')
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
