// Shared timing and reporting for the benchmarks in bench/. Each benchmark measures our
// operation and a peer's doing the same work on the same input in the same process, and reports
// both medians and their ratio: absolute times are noise on shared machines, ratios are not.
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import v8 from 'node:v8'
import vm from 'node:vm'

/** How a pair of operations is timed. */
export interface TimingOptions {
  /** Timed rounds; every reported figure is the median over the rounds. Default 7. */
  rounds?: number
  /** Slices per round: each slice runs ours then the peer (or the reverse). Default 8. */
  slices?: number
  /** Target length of one side's slice, in ms; sets each side's calls per slice. Default 15. */
  sliceMs?: number
  /** Minimum warm-up time per side, in ms (and at least `minWarmupCalls` calls). Default 300. */
  warmupMs?: number
  /** Minimum warm-up calls per side. Default 50. */
  minWarmupCalls?: number
  /**
   * Also run a full GC (untimed) before each side's part of every slice, not only before every
   * round. For operations that allocate megabytes per call and so run only a call or two per
   * slice: without it, the collections their garbage triggers land on the same side of each round
   * every time and skew the ratio (two identical 10 MB operations then differ by 30%). Default
   * false.
   */
  collectEverySlice?: boolean
  /**
   * Calls per slice for both sides, instead of the number the warm-up estimate gives each side.
   * With `collectEverySlice`, one call per slice measures every call from the same clean heap;
   * otherwise a side with more calls per slice also pays for collecting its own earlier calls'
   * garbage within the slice, and the side with fewer looks faster.
   */
  callsPerSlice?: number
}

/** One measured comparison. */
export interface Row {
  operation: string
  /** Median over the rounds of our µs per call. */
  oursUs: number
  /** Median over the rounds of the peer's µs per call. */
  peerUs: number
  /** Median over the rounds of the round's ours / peer. */
  ratio: number
  rounds: number
  /** Calls per round of each side. */
  oursCalls: number
  peerCalls: number
  /** Smallest and largest per-round ratio. */
  ratioRange: [number, number]
  /** Smallest and largest per-round µs per call of ours, and of the peer. */
  oursUsRange: [number, number]
  peerUsRange: [number, number]
}

/** An operation under test: one call. Its result is kept so the work cannot be optimised away. */
export type Operation = () => Promise<unknown> | unknown

/**
 * A full garbage collection, run (untimed) before the warm-up and before every round, so that
 * no round pays for collecting the garbage of an earlier round or comparison.
 */
export const collectGarbage: () => void = (() => {
  v8.setFlagsFromString('--expose-gc')
  const gc: unknown = vm.runInNewContext('gc')
  return typeof gc === 'function' ? () => gc() : () => {}
})()

let sink = 0

function keep(value: unknown): void {
  // Cheap and opaque enough that the engine must compute `value`.
  if (typeof value === 'string') sink += value.length
  else if (value !== undefined && value !== null) sink++
}

/** Read by the caller at the end so `sink` is observably used. */
export function sinkValue(): number {
  return sink
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of nothing')
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Run `calls` calls of `op`; returns the elapsed ms. */
async function runCalls(op: Operation, calls: number): Promise<number> {
  const start = performance.now()
  for (let i = 0; i < calls; i++) keep(await op())
  return performance.now() - start
}

/** Warm `op` up (JIT, caches); returns its estimated ms per call. */
async function warmUp(op: Operation, warmupMs: number, minCalls: number): Promise<number> {
  collectGarbage()
  let calls = 0
  let elapsed = 0
  let lastBatch = 0
  let lastBatchMs = 0
  for (let batch = 8; calls < minCalls || elapsed < warmupMs; batch = Math.min(batch * 2, 4096)) {
    const ms = await runCalls(op, batch)
    calls += batch
    elapsed += ms
    lastBatch = batch
    lastBatchMs = ms
  }
  return lastBatchMs / lastBatch
}

/**
 * Time `ours` against `peer` on the same input. Both are warmed up; then each of `rounds` rounds
 * (a full GC, untimed, before each) runs `slices` short slices, each about `sliceMs` of ours and
 * `sliceMs` of the peer in alternating order. Interleaving this finely means a load spike from
 * another process on a shared machine lands on both sides of a round alike, so the round's ratio
 * stays meaningful when its absolute times do not. Reports medians over the rounds.
 */
export async function compare(
  operation: string,
  ours: Operation,
  peer: Operation,
  options: TimingOptions = {},
): Promise<Row> {
  const rounds = options.rounds ?? 7
  const slices = options.slices ?? 8
  const sliceMs = options.sliceMs ?? 15
  const warmupMs = options.warmupMs ?? 300
  const minWarmupCalls = options.minWarmupCalls ?? 50
  const collectEverySlice = options.collectEverySlice ?? false

  const perSlice = (msPerCall: number) =>
    Math.max(1, Math.round(sliceMs / Math.max(msPerCall, 1e-6)))
  const oursEstimate = await warmUp(ours, warmupMs, minWarmupCalls)
  const peerEstimate = await warmUp(peer, warmupMs, minWarmupCalls)
  const oursPerSlice = options.callsPerSlice ?? perSlice(oursEstimate)
  const peerPerSlice = options.callsPerSlice ?? perSlice(peerEstimate)

  const oursRounds: number[] = []
  const peerRounds: number[] = []
  const ratios: number[] = []
  for (let r = 0; r < rounds; r++) {
    collectGarbage()
    let oursMs = 0
    let peerMs = 0
    for (let s = 0; s < slices; s++) {
      // Before each side's part of a slice, except the round's first (the round's GC ran).
      const turn = (op: Operation, calls: number, first: boolean) => {
        if (collectEverySlice && !(first && s === 0)) collectGarbage()
        return runCalls(op, calls)
      }
      if ((r + s) % 2 === 0) {
        oursMs += await turn(ours, oursPerSlice, true)
        peerMs += await turn(peer, peerPerSlice, false)
      } else {
        peerMs += await turn(peer, peerPerSlice, true)
        oursMs += await turn(ours, oursPerSlice, false)
      }
    }
    const oursUs = (oursMs * 1000) / (oursPerSlice * slices)
    const peerUs = (peerMs * 1000) / (peerPerSlice * slices)
    oursRounds.push(oursUs)
    peerRounds.push(peerUs)
    ratios.push(oursUs / peerUs)
  }
  return {
    operation,
    oursUs: median(oursRounds),
    peerUs: median(peerRounds),
    ratio: median(ratios),
    rounds,
    oursCalls: oursPerSlice * slices,
    peerCalls: peerPerSlice * slices,
    ratioRange: [Math.min(...ratios), Math.max(...ratios)],
    oursUsRange: [Math.min(...oursRounds), Math.max(...oursRounds)],
    peerUsRange: [Math.min(...peerRounds), Math.max(...peerRounds)],
  }
}

/** `node v20.x · <cpu model> · N cores · linux x64`. */
export function machineLine(): string {
  const cpus = os.cpus()
  const model = cpus[0]?.model.trim() ?? 'unknown CPU'
  return `node ${process.version} · ${model} · ${cpus.length} cores · ${os.platform()} ${os.arch()}`
}

function formatUs(us: number): string {
  if (us >= 1000) return us.toFixed(0)
  if (us >= 100) return us.toFixed(1)
  if (us >= 10) return us.toFixed(2)
  return us.toFixed(3)
}

function formatRatio(ratio: number): string {
  return `${ratio >= 10 ? ratio.toFixed(1) : ratio.toFixed(2)}×`
}

/**
 * A Markdown table (readable in a terminal, pasteable into docs/benchmarks.md) with the columns
 * operation, our µs/call, the peer's µs/call and the ratio ours / peer (median of the rounds).
 */
export function formatTable(rows: readonly Row[], peerName = 'peer'): string {
  const header = ['operation', 'ours µs/call', `${peerName} µs/call`, 'ratio']
  const body = rows.map((row) => [
    row.operation,
    formatUs(row.oursUs),
    formatUs(row.peerUs),
    formatRatio(row.ratio),
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i]!.length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`
  const rule = `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : '-'.repeat(w - 1) + ':')).join(' | ')} |`
  return [line(header), rule, ...body.map(line)].join('\n')
}

/** One line per row: calls per round and the spread of the per-round ratios. */
export function formatSpread(rows: readonly Row[]): string {
  return rows
    .map(
      (row) =>
        `  ${row.operation}: ${row.rounds} rounds of ${row.oursCalls} + ${row.peerCalls} calls; ` +
        `ratio ${formatRatio(row.ratioRange[0])}–${formatRatio(row.ratioRange[1])}`,
    )
    .join('\n')
}

/** Decimal megabytes per second for `bytes` handled in `us` µs. */
export function megabytesPerSecond(bytes: number, us: number): number {
  return bytes / us
}

function formatRate(mbPerS: number): string {
  return mbPerS >= 100 ? mbPerS.toFixed(0) : mbPerS.toFixed(1)
}

/** A measured comparison over an input of `bytes` bytes, for {@link formatThroughputTable}. */
export interface ThroughputRow extends Row {
  bytes: number
  /** Free text about the result (e.g. what the projection did). */
  note?: string
}

/**
 * A Markdown table of throughput comparisons: input size, ms per call and MB/s (decimal, 10⁶
 * bytes of input per second) of both sides, and the ratio of times ours / peer.
 */
export function formatThroughputTable(rows: readonly ThroughputRow[], peerName = 'peer'): string {
  const header = [
    'operation',
    'input MB',
    'ours ms',
    'ours MB/s',
    `${peerName} ms`,
    `${peerName} MB/s`,
    'ratio',
    ...(rows.some((r) => r.note !== undefined) ? ['result'] : []),
  ]
  const body = rows.map((row) => [
    row.operation,
    (row.bytes / 1e6).toFixed(2),
    (row.oursUs / 1000).toFixed(2),
    formatRate(megabytesPerSecond(row.bytes, row.oursUs)),
    (row.peerUs / 1000).toFixed(2),
    formatRate(megabytesPerSecond(row.bytes, row.peerUs)),
    formatRatio(row.ratio),
    ...(header.length > 7 ? [row.note ?? ''] : []),
  ])
  const left = (i: number) => i === 0 || i === 7
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i]!.length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (left(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`
  const rule = `| ${widths.map((w, i) => (left(i) ? '-'.repeat(w) : '-'.repeat(w - 1) + ':')).join(' | ')} |`
  return [line(header), rule, ...body.map(line)].join('\n')
}
