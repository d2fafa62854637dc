// Kernel overhead: the per-call cost of going through a session against the least work that
// yields the same result, in three parts.
//
// 1. Host-direct (`session.tool`) vs the direct adapter call: reads, a files batch, a listing,
//    and a custom tool that does nothing (`noop`) against a direct call of its function. The
//    noop row is the pure kernel overhead per host-direct call (goal: ≤ 25 µs).
// 2. Governed (`session.governedTool`, on a session with permission rules, a no-op preToolUse
//    hook and a budget) vs the direct call, and vs host-direct on a plain session.
// 3. Projection throughput: `projectOutput` on 1 MB and 10 MB outputs under both presets, vs
//    the least work evidence needs: UTF-8 encoding plus one SHA-256 (Web Crypto).
//
//   npx tsx bench/kernel-overhead.ts      (or `npm run bench`)
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import type {
  CustomTool,
  SessionOptions,
  ToolResult,
  ToolResultEvidenceV1,
  ToolResultTransformPolicyV1,
} from '../adapters/index.ts'
import {
  collectGarbage,
  compare,
  formatSpread,
  formatTable,
  formatThroughputTable,
  machineLine,
  median,
  sinkValue,
  type Operation,
  type Row,
  type ThroughputRow,
  type TimingOptions,
} from './harness.ts'
import { loadedFrom, ours } from './package-under-test.ts'

// Our side is the package as users get it (dist/), unless ISOAGENT_BENCH_SOURCES=1.
const { Agent, memoryWorkspace, projectOutput, ToolResultTransformPolicy, WorkspacePath } =
  await ours<typeof import('../adapters/index.ts')>('adapters/index')

const SMALL_LINES = 20
const LARGE_LINES = 2000
const BATCH_FILES = 8
const DIR_ENTRIES = 200
const DIR_SUBDIRS = 20
/** The goal for the noop row: kernel overhead per host-direct call, in µs. */
const OVERHEAD_GOAL_US = 25
/** Projection inputs, in bytes (decimal MB). */
const PROJECTION_SIZES = [1_000_000, 10_000_000] as const

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

/**
 * Build/test-log-like text of at most `targetBytes` UTF-8 bytes (within one line of it):
 * compiler diagnostics, test results with non-ASCII marks, source excerpts, and every 40 lines a
 * run of 4–8 identical lines (a repeated warning, blank lines or progress dots), about 15% of
 * the lines in all.
 */
function mixedText(targetBytes: number): string {
  const lines: string[] = []
  let bytes = 0
  const push = (line: string): boolean => {
    const size = Buffer.byteLength(line) + 1
    if (bytes + size > targetBytes) return false
    lines.push(line)
    bytes += size
    return true
  }
  const repeated = [
    'npm WARN deprecated glob@7.2.3: Glob versions prior to v9 are no longer supported',
    '',
    '....................................................................',
  ]
  for (let i = 0; ; i++) {
    if (i % 40 === 39) {
      const line = repeated[((i / 40) % repeated.length) | 0]!
      for (let k = 0; k < 4 + (i % 5); k++) if (!push(line)) return lines.join('\n') + '\n'
      continue
    }
    const file = `src/pkg${i % 17}/module${i % 101}.ts`
    let line: string
    switch (i % 4) {
      case 0:
        line = `${file}:${(i * 7) % 900}:${(i * 3) % 80} - error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.`
        break
      case 1:
        line = `  ✓ ${file} › parses cursor ${i} → résumé offset ${i * 13} (${i % 97} ms)`
        break
      case 2:
        line = `    ${(i % 900) + 1} | ${sourceLine(i % 31, i)}`
        break
      default:
        line = `[${String(i % 60).padStart(2, '0')}:${String(i % 59).padStart(2, '0')}] info  built chunk-${i.toString(16)}.js (${i % 4096} kB)`
    }
    if (!push(line)) return lines.join('\n') + '\n'
  }
}

/** A pretty-printed (2-space) top-level JSON array of diagnostics, at most `targetBytes` bytes. */
function jsonArray(targetBytes: number): string {
  const item = (i: number) => ({
    path: `src/pkg${i % 17}/module${i % 101}.ts`,
    line: (i * 7) % 900,
    column: (i * 3) % 80,
    severity: i % 5 === 0 ? 'error' : 'warning',
    rule: ['no-unused-vars', 'eqeqeq', 'prefer-const', 'no-shadow'][i % 4],
    message: `'value${i}' is assigned a value but never used (déjà vu #${i}).`,
  })
  let count = Math.floor(targetBytes / 200)
  for (;;) {
    const text = JSON.stringify(
      Array.from({ length: count }, (_, i) => item(i)),
      null,
      2,
    )
    const size = Buffer.byteLength(text)
    if (size <= targetBytes && size > targetBytes * 0.99) return text
    count = Math.floor((count * targetBytes) / size) - (size > targetBytes ? 1 : 0)
  }
}

/** The 1-, 5- and 15-minute load averages: the benchmark is only as quiet as the machine. */
function loadLine(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`kernel-overhead: ${message}`)
}

function expectOk(result: ToolResult, what: string): ToolResult {
  check(result.exitCode === 0, `${what} failed: ${result.output}`)
  return result
}

function evidenceOf(result: ToolResult): ToolResultEvidenceV1 {
  const evidence = result.metadata?.a3s_tool_result_evidence as ToolResultEvidenceV1 | undefined
  check(evidence !== undefined, `${result.name} result carries no evidence`)
  return evidence!
}

/** The function the noop tool runs, called directly by the peer. */
const noopRun = (): string => 'ok'

const noopTool: CustomTool = {
  name: 'noop',
  description: 'no-op tool for benchmarking',
  parameters: { type: 'object', additionalProperties: false, properties: {} },
  scheduling: { read_only: true, idempotent: true, max_parallelism: 1000 },
  run: noopRun,
}

/** A realistic governed session: permission rules, a no-op preToolUse hook, a large budget. */
const governedOptions: SessionOptions = {
  tools: [noopTool],
  permissions: { allow: ['read'], deny: ['write(secrets/**)'], ask: ['edit'] },
  hooks: { preToolUse: () => undefined },
  budget: { maxToolCalls: Number.MAX_SAFE_INTEGER, maxOutputBytes: Number.MAX_SAFE_INTEGER },
}

/**
 * Large inputs take milliseconds a call, and each allocates megabytes: one call per slice for
 * both sides, with a full GC (untimed) before each, so every call starts from the same clean heap
 * and neither side pays for collecting the other's (or its own earlier calls') garbage. The A/A
 * row checks that this comes out at 1.00×.
 */
function projectionTiming(bytes: number): TimingOptions {
  const common = { warmupMs: 200, minWarmupCalls: 3, collectEverySlice: true, callsPerSlice: 1 }
  return bytes >= 5_000_000
    ? { ...common, rounds: 5, slices: 3 }
    : { ...common, rounds: 7, slices: 6 }
}

const encoder = new TextEncoder()

/**
 * Let the C allocator keep megabyte buffers instead of mapping fresh pages for each. glibc
 * serves large blocks with mmap until one is freed, then raises its mmap threshold to that
 * block's size (up to 32 MiB) and its trim threshold to twice that. Without this, every call's
 * 10 MB buffers could be mapped (or trimmed) and page-faulted afresh, which on the VM this was
 * first run on costs about 3.5 ms per MB and made the 10 MB rows vary threefold with the
 * allocator's history. Elsewhere this is a harmless 30 MiB allocation.
 */
function settleAllocator(): void {
  const touch = (block: Uint8Array) => (block[block.length - 1] = 1)
  touch(new Uint8Array(30 * 1024 * 1024))
  collectGarbage()
}

/** Milliseconds each session operation runs before any row is timed (see {@link prewarm}). */
const PREWARM_MS = 400

/**
 * Run each operation for `ms` ms. The kernel's and the read tool's code (streams, abort
 * signals, Web Crypto) take a few thousand calls, far more than one row's warm-up, to reach a
 * steady speed; warming them all first keeps the first rows from paying for it.
 */
async function prewarm(ops: readonly Operation[], ms: number): Promise<void> {
  for (const op of ops) {
    const end = performance.now() + ms
    while (performance.now() < end) await op()
  }
}

/** The least work evidence needs: encode once, hash once. */
async function encodeAndDigest(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest('SHA-256', encoder.encode(text))
}

/** Medians over 7 batches of 3000 calls of wall and process CPU (all threads) µs per call. */
async function wallAndCpu(op: Operation): Promise<{ wall: number; cpu: number }> {
  const wall: number[] = []
  const cpu: number[] = []
  for (let batch = -1; batch < 7; batch++) {
    const used = process.cpuUsage()
    const start = performance.now()
    for (let i = 0; i < 3000; i++) await op()
    const elapsed = performance.now() - start
    const { user, system } = process.cpuUsage(used)
    if (batch < 0) continue
    wall.push((elapsed * 1000) / 3000)
    cpu.push((user + system) / 3000)
  }
  return { wall: median(wall), cpu: median(cpu) }
}

function describeProjection(evidence: ToolResultEvidenceV1): string {
  const kb = (n: number) => `${(n / 1024).toFixed(0)} KiB`
  return `${evidence.loss_mode} → ${kb(evidence.projected_bytes)}`
}

async function main(): Promise<void> {
  const files = fixture()
  const workspace = memoryWorkspace(files)
  const session = await Agent.create().session(workspace, { tools: [noopTool] })
  const governedWorkspace = memoryWorkspace(files)
  const governed = await Agent.create().session(governedWorkspace, governedOptions)
  // The tool refuses invalid UTF-8, so the peer decodes strictly as well.
  const decoder = new TextDecoder('utf-8', { fatal: true })

  const directRead = async (path: string): Promise<string> =>
    decoder.decode(await workspace.read(WorkspacePath.parse(path)))

  const batchPaths = Array.from({ length: BATCH_FILES }, (_, i) => `batch/file${i}.ts`)
  const batchArgs = { files: batchPaths.map((path) => ({ path })) }
  const smallArgs = { file_path: 'src/small.ts' }

  // Both sides must do the work being compared: check once, before anything is timed.
  const small = expectOk(await session.tool('read', smallArgs), 'read small')
  check(small.output.split('\n').length === SMALL_LINES, 'small read is not the whole file')
  check(evidenceOf(small).loss_mode === 'none', 'small read was projected lossily')
  const smallGoverned = expectOk(await governed.governedTool('read', smallArgs), 'governed read')
  check(smallGoverned.output === small.output, 'governed read differs from host-direct read')
  // The 2000-line read renders every line (about 152 KiB), which the default (conservative)
  // policy then cuts to a 100 KiB head, keeping the whole output as an artifact.
  const large = expectOk(await session.tool('read', { file_path: 'src/large.ts' }), 'read large')
  const largeRange = large.metadata?.range as { returned_lines?: number } | undefined
  check(largeRange?.returned_lines === LARGE_LINES, 'large read did not render every line')
  const largeEvidence = evidenceOf(large)
  check(largeEvidence.loss_mode === 'bounded_preview', 'large read was not cut to a head')
  const largeFull = await session.getArtifact(largeEvidence.content_ref)
  check(largeFull !== undefined, 'large read left no artifact')
  const largeText = decoder.decode(largeFull!)
  check(largeText.split('\n').length === LARGE_LINES, 'large artifact is not the whole file')
  check(largeText.endsWith(sourceLine(1, LARGE_LINES - 1)), 'large artifact lacks the last line')
  check((await directRead('src/large.ts')) === files['src/large.ts'], 'direct read differs')
  const batch = expectOk(await session.tool('read', batchArgs), 'read batch')
  const status = (batch.metadata as { batch?: { status?: string } }).batch?.status
  check(status === 'complete', `batch read is ${status}, not complete`)
  const ls = expectOk(await session.tool('ls', { path: 'wide' }), 'ls')
  check(ls.output.split('\n').length === DIR_ENTRIES, 'ls did not list every entry on one page')
  const direct = await workspace.list(WorkspacePath.parse('wide'))
  check(direct.entries.length === DIR_ENTRIES, 'direct list is not every entry')
  const noop = expectOk(await session.tool('noop', {}), 'noop')
  check(noop.output === noopRun(), 'noop output differs from its function')
  expectOk(await governed.governedTool('noop', {}), 'governed noop')
  const denied = await governed.governedTool('write', {
    file_path: 'secrets/key.txt',
    content: 'x',
  })
  check(denied.errorKind?.type === 'permission_denied', 'governed session does not deny writes')

  console.log('Kernel overhead: session calls on a memory workspace vs the direct adapter call')
  console.log(`${machineLine()} · ${loadedFrom}`)
  const loadAtStart = loadLine()
  console.log()

  await prewarm(
    [
      () => session.tool('read', smallArgs),
      () => session.tool('read', { file_path: 'src/large.ts' }),
      () => session.tool('read', batchArgs),
      () => session.tool('ls', { path: 'wide' }),
      () => session.tool('noop', {}),
      () => governed.governedTool('read', smallArgs),
      () => governed.governedTool('noop', {}),
    ],
    PREWARM_MS,
  )

  const measure = async <R extends Row>(list: R[], row: Promise<R>) => {
    const done = await row
    list.push(done)
    console.log(`  measured: ${done.operation}`)
  }

  // 1. Host-direct vs direct.
  const hostRows: Row[] = []
  await measure(
    hostRows,
    compare(
      `read ${SMALL_LINES}-line file`,
      () => session.tool('read', smallArgs),
      () => directRead('src/small.ts'),
    ),
  )
  await measure(
    hostRows,
    compare(
      `read ${LARGE_LINES}-line file (cut to 100 KiB)`,
      () => session.tool('read', { file_path: 'src/large.ts' }),
      () => directRead('src/large.ts'),
    ),
  )
  await measure(
    hostRows,
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
  await measure(
    hostRows,
    compare(
      `ls ${DIR_ENTRIES}-entry directory`,
      () => session.tool('ls', { path: 'wide' }),
      () => workspace.list(WorkspacePath.parse('wide')),
    ),
  )
  await measure(
    hostRows,
    compare(
      'noop custom tool',
      () => session.tool('noop', {}),
      () => noopRun(),
    ),
  )

  // 2. Governed vs direct, and governed vs host-direct (plain session).
  const governedRows: Row[] = []
  await measure(
    governedRows,
    compare(
      `read ${SMALL_LINES}-line file`,
      () => governed.governedTool('read', smallArgs),
      () => directRead('src/small.ts'),
    ),
  )
  await measure(
    governedRows,
    compare(
      'noop custom tool',
      () => governed.governedTool('noop', {}),
      () => noopRun(),
    ),
  )
  const governedVsHostRows: Row[] = []
  await measure(
    governedVsHostRows,
    compare(
      `read ${SMALL_LINES}-line file`,
      () => governed.governedTool('read', smallArgs),
      () => session.tool('read', smallArgs),
    ),
  )
  await measure(
    governedVsHostRows,
    compare(
      'noop custom tool',
      () => governed.governedTool('noop', {}),
      () => session.tool('noop', {}),
    ),
  )

  // Wall and process CPU time of back-to-back noop calls: when CPU ≈ wall, the wall time is not
  // inflated by other processes, and what remains is the kernel's own cost (GC included).
  const noopCpu = await wallAndCpu(() => session.tool('noop', {}))
  const governedNoopCpu = await wallAndCpu(() => governed.governedTool('noop', {}))

  await session.close()
  await governed.close()

  // 3. Projection throughput.
  settleAllocator()
  const conservative = ToolResultTransformPolicy.conservative()
  const efficient = ToolResultTransformPolicy.contextEfficient()
  const cases: {
    label: string
    make: (bytes: number) => string
    policy: ToolResultTransformPolicyV1
    expect: string
  }[] = [
    {
      label: 'text, conservative',
      make: mixedText,
      policy: conservative,
      expect: 'bounded_preview',
    },
    { label: 'text, contextEfficient', make: mixedText, policy: efficient, expect: 'composite' },
    {
      label: 'JSON array, contextEfficient',
      make: jsonArray,
      policy: efficient,
      expect: 'deterministic_transform',
    },
  ]
  const projectionRows: ThroughputRow[] = []
  for (const size of PROJECTION_SIZES) {
    for (const c of cases) {
      const output = c.make(size)
      const bytes = Buffer.byteLength(output)
      const projection = await projectOutput('bash', output, c.policy)
      const evidence = projection.evidence
      check(evidence.original_bytes === bytes, `${c.label}: evidence counts the wrong bytes`)
      check(evidence.loss_mode === c.expect, `${c.label}: ${evidence.loss_mode}, not ${c.expect}`)
      check(evidence.projected_bytes <= c.policy.max_output_bytes, `${c.label}: not within max`)
      const row = await compare(
        `${c.label}, ${size / 1e6} MB`,
        () => projectOutput('bash', output, c.policy),
        () => encodeAndDigest(output),
        projectionTiming(size),
      )
      projectionRows.push({ ...row, bytes, note: describeProjection(evidence) })
      console.log(`  measured: projection ${row.operation}`)
    }
  }
  // A/A check of the method: the peer against itself should come out at 1.00×.
  {
    const size = PROJECTION_SIZES[PROJECTION_SIZES.length - 1]!
    const output = mixedText(size)
    const row = await compare(
      `A/A: encode+sha256 vs itself, ${size / 1e6} MB`,
      () => encodeAndDigest(output),
      () => encodeAndDigest(output),
      projectionTiming(size),
    )
    projectionRows.push({ ...row, bytes: Buffer.byteLength(output), note: 'method check' })
    console.log(`  measured: projection ${row.operation}`)
  }

  console.log()
  console.log('Host-direct: session.tool(...) vs the direct adapter call')
  console.log()
  console.log(formatTable(hostRows, 'direct'))
  console.log()
  console.log('Governed: session.governedTool(...) on the governed session vs the direct call')
  console.log()
  console.log(formatTable(governedRows, 'direct'))
  console.log()
  console.log('Governed (governed session) vs host-direct (plain session)')
  console.log()
  console.log(formatTable(governedVsHostRows, 'host-direct'))
  console.log()
  const noopHost = hostRows.find((r) => r.operation === 'noop custom tool')!
  const noopGoverned = governedRows.find((r) => r.operation === 'noop custom tool')!
  const overhead = noopHost.oursUs - noopHost.peerUs
  const bestOverhead = noopHost.oursUsRange[0] - noopHost.peerUsRange[0]
  const verdict =
    overhead <= OVERHEAD_GOAL_US
      ? 'met'
      : `NOT met (${(overhead / OVERHEAD_GOAL_US).toFixed(2)}× the goal)`
  console.log(
    `Kernel overhead per host-direct call (noop − direct): ${overhead.toFixed(1)} µs median, ` +
      `${bestOverhead.toFixed(1)} µs in the best round; goal ≤ ${OVERHEAD_GOAL_US} µs: ${verdict}`,
  )
  console.log(
    `  host-direct noop back to back: ${noopCpu.wall.toFixed(1)} µs wall, ` +
      `${noopCpu.cpu.toFixed(1)} µs process CPU per call`,
  )
  console.log(
    `Kernel overhead per governed call (noop − direct): ` +
      `${(noopGoverned.oursUs - noopGoverned.peerUs).toFixed(1)} µs median, ` +
      `${(noopGoverned.oursUsRange[0] - noopGoverned.peerUsRange[0]).toFixed(1)} µs in the best round`,
  )
  console.log(
    `  governed noop back to back: ${governedNoopCpu.wall.toFixed(1)} µs wall, ` +
      `${governedNoopCpu.cpu.toFixed(1)} µs process CPU per call`,
  )
  console.log()
  console.log('Projection: projectOutput(...) vs TextEncoder.encode + crypto.subtle.digest SHA-256')
  console.log()
  console.log(formatThroughputTable(projectionRows, 'encode+sha256'))
  console.log()
  console.log('ratio = ours / peer, median of the per-round ratios. Rounds:')
  console.log('host-direct vs direct:')
  console.log(formatSpread(hostRows))
  console.log('governed vs direct:')
  console.log(formatSpread(governedRows))
  console.log('governed vs host-direct:')
  console.log(formatSpread(governedVsHostRows))
  console.log('projection vs encode+sha256:')
  console.log(formatSpread(projectionRows))
  console.log()
  console.log(`load average (1, 5, 15 min): ${loadAtStart} at the start, ${loadLine()} at the end`)
  if (sinkValue() < 0) console.log('(unreachable)')
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
