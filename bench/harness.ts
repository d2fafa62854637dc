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
}

/** An operation under test: one call. Its result is kept so the work cannot be optimised away. */
export type Operation = () => Promise<unknown> | unknown

/**
 * A full garbage collection, run (untimed) before the warm-up and before every round, so that
 * no round pays for collecting the garbage of an earlier round or comparison.
 */
const collectGarbage: () => void = (() => {
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

  const perSlice = (msPerCall: number) =>
    Math.max(1, Math.round(sliceMs / Math.max(msPerCall, 1e-6)))
  const oursPerSlice = perSlice(await warmUp(ours, warmupMs, minWarmupCalls))
  const peerPerSlice = perSlice(await warmUp(peer, warmupMs, minWarmupCalls))

  const oursRounds: number[] = []
  const peerRounds: number[] = []
  const ratios: number[] = []
  for (let r = 0; r < rounds; r++) {
    collectGarbage()
    let oursMs = 0
    let peerMs = 0
    for (let s = 0; s < slices; s++) {
      if ((r + s) % 2 === 0) {
        oursMs += await runCalls(ours, oursPerSlice)
        peerMs += await runCalls(peer, peerPerSlice)
      } else {
        peerMs += await runCalls(peer, peerPerSlice)
        oursMs += await runCalls(ours, oursPerSlice)
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
