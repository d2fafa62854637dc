// Where a host-direct call of a do-nothing custom tool spends its time: the pure kernel overhead
// that bench/kernel-overhead.ts reports against its 25 µs goal.
//
// 1. A CPU profile (node:inspector, 250 µs sampling) of back-to-back `session.tool('noop', {})`
//    calls after a warm-up. Each sample is put in one stage, by the innermost frame of its stack
//    that names a stage (see STAGES); samples in no stage's frame count as "other".
// 2. An allocation profile (sampling heap profiler, counting objects that minor and major GCs
//    have already collected): bytes allocated per call, by the function that allocated them.
//    Garbage collection is the largest stage of the CPU profile; this says where it comes from.
// 3. Manual timing of the steps such a call takes, each reproduced in isolation, so the costs
//    can be compared with the whole call and with cheaper alternatives.
// 4. SHA-256 by input size: @noble/hashes (synchronous, what `sha256Hex` uses below 4 KiB),
//    Web Crypto (asynchronous, above) and node:crypto, to place the threshold.
// 5. A what-if, without touching src/: the same call with a lightweight `AbortController` whose
//    signal is a plain object, interleaved batch by batch with the call as it is.
//
// Wall times on a loaded machine are inflated by other processes; the process CPU time per call
// (every thread of this process, GC helpers included) is printed alongside, as it is not.
//
//   npx tsx bench/profile-noop.ts
//   npm run build && ISOAGENT_BENCH_DIST=1 npx tsx bench/profile-noop.ts   (the tsc build)
import { createHash } from 'node:crypto'
import { Session as InspectorSession } from 'node:inspector/promises'
import { performance, PerformanceObserver } from 'node:perf_hooks'
import { Validator } from '@cfworker/json-schema'
import { sha256 } from '@noble/hashes/sha2.js'
import type { CustomTool } from '../adapters/index.ts'
import { Sanitizer } from '../src/kernel/sanitize.ts'
import { Scheduler } from '../src/kernel/scheduler.ts'
import { machineLine, median, sinkValue } from './harness.ts'

// The sources run through tsx by default; ISOAGENT_BENCH_DIST=1 profiles the tsc build in dist/
// instead, which lacks the `__name` wrappers tsx (esbuild keepNames) puts around functions.
const fromDist = process.env.ISOAGENT_BENCH_DIST === '1'
const entry = fromDist ? '../dist/adapters/index.js' : '../adapters/index.ts'
const { Agent, memoryWorkspace, projectOutput, toolSuccess, ToolResultTransformPolicy } =
  (await import(entry)) as typeof import('../adapters/index.ts')

const WARMUP_CALLS = 20_000
const PROFILED_CALLS = 30_000
/** Sampling interval of the profiler; finer sampling slows the calls down noticeably. */
const SAMPLING_US = 250

const noopTool: CustomTool = {
  name: 'noop',
  description: 'no-op tool for benchmarking',
  parameters: { type: 'object', additionalProperties: false, properties: {} },
  scheduling: { read_only: true, idempotent: true, max_parallelism: 1000 },
  run: () => 'ok',
}

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

/** True when `url` is our module `name` (.ts from the sources, .js from dist/). */
const inFile = (url: string, name: string) =>
  url.endsWith(`/${name}.ts`) || url.endsWith(`/${name}.js`)

/** Stages, tried for each frame from the innermost outwards; the first match names the sample. */
const STAGES: { stage: string; match: (fn: string, url: string) => boolean }[] = [
  { stage: 'idle (main thread waiting)', match: (fn) => fn === '(idle)' },
  { stage: 'garbage collection', match: (fn) => fn === '(garbage collector)' },
  {
    stage: 'SHA-256 (@noble/hashes; Web Crypto from 4 KiB)',
    match: (fn, url) =>
      url.includes('internal/crypto') || url.includes('@noble/hashes') || fn === 'sha256Hex',
  },
  {
    stage: 'AbortController/AbortSignal + listeners',
    match: (_fn, url) => url.includes('abort_controller') || url.includes('event_target'),
  },
  { stage: 'timers (setTimeout/clearTimeout)', match: (_fn, url) => url.includes('timers') },
  { stage: 'structuredClone', match: (fn) => fn === 'structuredClone' },
  { stage: 'TextEncoder (utf8)', match: (_fn, url) => url.includes('internal/encoding') },
  {
    stage: 'argument validation (@cfworker/json-schema)',
    match: (fn, url) => url.includes('json-schema') || fn === 'validate',
  },
  {
    stage: 'result objects (toolSuccess: defineProperty getter)',
    match: (_f, u) => inFile(u, 'tool-result'),
  },
  { stage: 'sanitiser (7+ regexes, deep copy)', match: (_f, u) => inFile(u, 'sanitize') },
  { stage: 'scheduler (two semaphores)', match: (_f, u) => inFile(u, 'scheduler') },
  { stage: 'projection (excluding SHA-256)', match: (_f, u) => inFile(u, 'project') },
  {
    stage: 'tsx keepNames helper (__name; not in the tsc build)',
    match: (fn) => fn === '__name',
  },
  { stage: 'custom-tool wrapper', match: (_f, u) => inFile(u, 'custom-tool') },
  {
    stage: 'kernel body (invoke/finish closures, promise plumbing)',
    match: (_f, u) => inFile(u, 'kernel') || inFile(u, 'session'),
  },
  { stage: 'VM/native without JS frame', match: (fn) => fn === '(program)' },
]

function stagesOf(profile: Profile): { stage: string; ms: number }[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const totals = new Map<string, number>()
  profile.samples.forEach((leaf, i) => {
    let stage = 'other (benchmark loop, V8 builtins)'
    search: for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame
      for (const s of STAGES) {
        if (s.match(frame.functionName, frame.url)) {
          stage = s.stage
          break search
        }
      }
    }
    totals.set(stage, (totals.get(stage) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000)
  })
  return [...totals].map(([stage, ms]) => ({ stage, ms })).sort((a, b) => b.ms - a.ms)
}

/** Milliseconds of GC pauses observed so far (the observer runs while main() does). */
let gcPauseMs = 0
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcPauseMs += entry.duration
})

/** Wall, process CPU and GC pause µs per call of `calls` sequential calls of `op`. */
async function batch(
  op: () => unknown,
  calls: number,
): Promise<{ wall: number; cpu: number; gc: number }> {
  let sink = 0
  const gcBefore = gcPauseMs
  const cpu = process.cpuUsage()
  const start = performance.now()
  for (let i = 0; i < calls; i++) if ((await op()) !== undefined) sink++
  const wall = ((performance.now() - start) * 1000) / calls
  const used = process.cpuUsage(cpu)
  // GC entries reach the observer a tick later.
  await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setImmediate(resolve))
  if (sink < 0) console.log('(unreachable)')
  return {
    wall,
    cpu: (used.user + used.system) / calls,
    gc: ((gcPauseMs - gcBefore) * 1000) / calls,
  }
}

/** Median wall µs per call of `op` over 9 batches of `calls` calls, after one batch of warm-up. */
async function time(op: () => unknown, calls = 20_000): Promise<number> {
  await batch(op, calls)
  const results: number[] = []
  for (let r = 0; r < 9; r++) results.push((await batch(op, calls)).wall)
  return median(results)
}

/** Profile `PROFILED_CALLS` calls of `call` and print the time per stage. */
async function profileCalls(call: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < WARMUP_CALLS; i++) await call()
  const inspector = new InspectorSession()
  inspector.connect()
  await inspector.post('Profiler.enable')
  await inspector.post('Profiler.setSamplingInterval', { interval: SAMPLING_US })
  await inspector.post('Profiler.start')
  const timed = await batch(call, PROFILED_CALLS)
  const { profile } = (await inspector.post('Profiler.stop')) as unknown as { profile: Profile }
  await inspector.post('Profiler.disable')
  inspector.disconnect()
  const stages = stagesOf(profile)
  const sampledMs = stages.reduce((sum, s) => sum + s.ms, 0)
  console.log(
    `CPU profile of ${PROFILED_CALLS} calls, profiler on: per call ${timed.wall.toFixed(1)} µs ` +
      `wall, ${timed.cpu.toFixed(1)} µs process CPU, ${timed.gc.toFixed(1)} µs in GC pauses`,
  )
  console.log()
  console.log('| stage (innermost matching frame) | share | µs/call (of wall) |')
  console.log('| -------------------------------- | ----: | ----------------: |')
  for (const s of stages) {
    const share = s.ms / sampledMs
    console.log(
      `| ${s.stage} | ${(share * 100).toFixed(1)}% | ${(share * timed.wall).toFixed(1)} |`,
    )
  }
  console.log()
}

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: HeapNode[]
}

/** Sample the allocations of `calls` calls of `call`; print the top allocating functions. */
async function allocationsOf(call: () => Promise<unknown>, calls: number): Promise<void> {
  const inspector = new InspectorSession()
  inspector.connect()
  await inspector.post('HeapProfiler.enable')
  const sampling = {
    samplingInterval: 64,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  }
  await inspector.post('HeapProfiler.startSampling', sampling)
  for (let i = 0; i < calls; i++) await call()
  const { profile } = (await inspector.post('HeapProfiler.stopSampling')) as unknown as {
    profile: { head: HeapNode }
  }
  await inspector.post('HeapProfiler.disable')
  inspector.disconnect()
  const bytes = new Map<string, number>()
  let total = 0
  const walk = (node: HeapNode) => {
    const { functionName, url, lineNumber } = node.callFrame
    const file = url.split('/').pop() || '(native)'
    const key = `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`
    bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize)
    total += node.selfSize
    node.children.forEach(walk)
  }
  walk(profile.head)
  console.log(
    `Allocation profile of ${calls} calls: ${(total / calls).toFixed(0)} bytes allocated per call`,
  )
  console.log()
  console.log('| allocated in (function file:line) | bytes/call |')
  console.log('| --------------------------------- | ---------: |')
  for (const [key, size] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, 16))
    console.log(`| ${key} | ${(size / calls).toFixed(0)} |`)
  console.log()
}

/** An AbortController whose signal is a plain object: enough for the kernel and a noop tool. */
class LightAbortController {
  readonly signal = {
    aborted: false,
    reason: undefined as unknown,
    listeners: [] as (() => void)[],
    addEventListener(_type: string, listener: () => void) {
      this.listeners.push(listener)
    },
    removeEventListener(_type: string, listener: () => void) {
      const at = this.listeners.indexOf(listener)
      if (at !== -1) this.listeners.splice(at, 1)
    },
    throwIfAborted() {
      if (this.aborted) throw this.reason
    },
  }

  abort(reason?: unknown): void {
    if (this.signal.aborted) return
    this.signal.aborted = true
    this.signal.reason = reason
    for (const listener of this.signal.listeners.splice(0)) listener()
  }
}

const NodeAbortController = globalThis.AbortController

async function main(): Promise<void> {
  gcObserver.observe({ entryTypes: ['gc'] })
  const session = await Agent.create().session(memoryWorkspace({}), { tools: [noopTool] })
  const call = () => session.tool('noop', {})
  const first = await call()
  if (first.exitCode !== 0 || first.output !== 'ok') throw new Error('noop call failed')

  const build = fromDist ? 'dist/, tsc build' : 'sources via tsx'
  console.log(`Profile of a host-direct noop call: session.tool("noop", {}) (${build})`)
  console.log(machineLine())
  console.log()

  // 1. CPU profile of back-to-back calls.
  await profileCalls(call)

  // 2. Allocation profile.
  await allocationsOf(call, 10_000)

  // 3. Manual timing of the steps, each in isolation.
  const conservative = ToolResultTransformPolicy.conservative()
  const ok = new TextEncoder().encode('ok')
  const sanitizer = new Sanitizer()
  const scheduler = new Scheduler()
  const validator = new Validator(
    noopTool.parameters as ConstructorParameters<typeof Validator>[0],
    '2020-12',
    true,
  )
  const closing = new AbortController()
  const evidence = (await projectOutput('noop', 'ok', conservative)).evidence
  const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
  if (`sha256:${hex(sha256(ok))}` !== evidence.content_digest)
    throw new Error('@noble/hashes disagrees with the evidence digest')

  const steps: { step: string; op: () => unknown; calls?: number }[] = [
    { step: 'whole call: session.tool("noop", {})', op: call, calls: 5000 },
    {
      step: 'projectOutput("noop", "ok", conservative)',
      op: () => projectOutput('noop', 'ok', conservative),
    },
    { step: 'SHA-256 of 2 bytes, @noble/hashes (sync)', op: () => sha256(ok) },
    {
      step: 'SHA-256 of 2 bytes, crypto.subtle.digest (thread-pool round trip)',
      op: () => crypto.subtle.digest('SHA-256', ok),
      calls: 5000,
    },
    { step: 'new AbortController()', op: () => new AbortController() },
    {
      step: 'new AbortController().signal (Node creates it lazily)',
      op: () => new AbortController().signal,
    },
    {
      step: 'per-call abort wiring as in invoke(): controller, signal, 2 listeners, add/remove on the session signal',
      op: () => {
        const controller = new AbortController()
        const abort = () => controller.abort()
        closing.signal.addEventListener('abort', abort, { once: true })
        controller.signal.addEventListener('abort', abort, { once: true })
        controller.signal.addEventListener('abort', abort, { once: true })
        closing.signal.removeEventListener('abort', abort)
        return controller
      },
    },
    {
      step: 'deadline timer: setTimeout + clearTimeout',
      op: () => clearTimeout(setTimeout(() => {}, 60_000)),
    },
    {
      step: 'Promise.race([running, interrupted])',
      op: () => Promise.race([Promise.resolve(1), new Promise(() => {})]),
    },
    {
      step: 'scheduler.slot + release (two semaphores)',
      op: async () => (await scheduler.slot('noop', 1000, closing.signal, false))(),
    },
    { step: 'validate {} (@cfworker/json-schema)', op: () => validator.validate({}) },
    { step: 'structuredClone({}) (custom-tool args)', op: () => structuredClone({}) },
    { step: 'sanitiser.text("ok")', op: () => sanitizer.text('ok') },
    {
      step: 'toolSuccess("noop", "ok", metadata) (own getter via defineProperty)',
      op: () => toolSuccess('noop', 'ok', { a3s_tool_result_evidence: evidence }),
    },
    {
      step: 'the same result as a plain object literal',
      op: () => ({
        name: 'noop',
        output: 'ok',
        exitCode: 0,
        metadata: { a3s_tool_result_evidence: evidence },
      }),
    },
    {
      step: 'call id: Date.now().toString(36) + counter',
      op: () => `call_${Date.now().toString(36)}_${(12345).toString(36)}`,
    },
    { step: 'await of a resolved promise (one microtask hop)', op: async () => await undefined },
  ]
  console.log('| step, timed in isolation | µs/call |')
  console.log('| ------------------------ | ------: |')
  for (const s of steps) console.log(`| ${s.step} | ${(await time(s.op, s.calls)).toFixed(2)} |`)
  console.log()

  // 4. SHA-256 by size.
  console.log('| SHA-256 of | @noble/hashes µs | Web Crypto µs | node:crypto µs | noble MB/s |')
  console.log('| ---------: | ---------------: | ------------: | -------------: | ---------: |')
  for (const size of [1024, 4096, 16_384, 65_536, 262_144, 1_048_576]) {
    const bytes = new Uint8Array(size).map((_, i) => (i * 31) & 0xff)
    const calls = Math.max(20, Math.round(4_000_000 / size))
    const noble = await time(() => sha256(bytes), calls)
    const web = await time(() => crypto.subtle.digest('SHA-256', bytes), calls)
    const node = await time(() => createHash('sha256').update(bytes).digest(), calls)
    const label = size >= 1_048_576 ? `${size / 1_048_576} MiB` : `${size / 1024} KiB`
    console.log(
      `| ${label} | ${noble.toFixed(1)} | ${web.toFixed(1)} | ${node.toFixed(1)} | ${(size / noble).toFixed(0)} |`,
    )
  }
  console.log()

  // 5. What-if: a lightweight per-call AbortController, interleaved with the call as it is.
  const variants = [
    { name: 'as is', apply: () => {} },
    {
      name: 'lightweight per-call AbortController (what-if)',
      apply: () => {
        globalThis.AbortController = LightAbortController as unknown as typeof AbortController
      },
    },
  ]
  const wall = variants.map(() => [] as number[])
  const cpu = variants.map(() => [] as number[])
  const gc = variants.map(() => [] as number[])
  for (let round = -1; round < 9; round++) {
    for (const [i, v] of variants.entries()) {
      v.apply()
      try {
        const timed = await batch(call, 3000)
        if (round >= 0) {
          wall[i]!.push(timed.wall)
          cpu[i]!.push(timed.cpu)
          gc[i]!.push(timed.gc)
        }
      } finally {
        globalThis.AbortController = NodeAbortController
      }
    }
  }
  console.log(
    '| whole host-direct noop call | wall µs/call | process CPU µs/call | GC pause µs/call |',
  )
  console.log(
    '| --------------------------- | -----------: | ------------------: | ---------------: |',
  )
  for (const [i, v] of variants.entries()) {
    const cells = [wall, cpu, gc].map((m) => median(m[i]!).toFixed(1))
    console.log(`| ${v.name} | ${cells.join(' | ')} |`)
  }

  gcObserver.disconnect()
  await session.close()
  if (sinkValue() < 0) console.log('(unreachable)')
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
