// dynamic_workflow: the per-step overhead of a journaled workflow. One run of STEPS trivial
// steps (each a call of the script in QuickJS returning `input.n * 2`, one at a time) against
// STEPS sequential `program` calls computing the same, in the same session; with the memory
// store and with the workspace file store on the local disk (every append fsync'd). Rounds
// alternate which side goes first; the ratio is the median of per-round ratios. Outputs are
// compared before any ratio is given. Goal: ≤ 1.5×.
//
//   npx tsx bench/workflow.ts      (or `npm run bench:workflow`)
//   WORKFLOW_BENCH_ROUNDS (default 7), WORKFLOW_BENCH_STEPS (default 100)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import {
  Agent,
  memoryWorkflowStore,
  memoryWorkspace,
  type Session,
  type WorkflowStore,
} from '../adapters/index.ts'
import { localWorkspace } from '../adapters/node/index.ts'
import { collectGarbage, machineLine, median } from './harness.ts'

const ROUNDS = Number(process.env.WORKFLOW_BENCH_ROUNDS ?? 7)
const STEPS = Number(process.env.WORKFLOW_BENCH_STEPS ?? 100)
const GOAL = 1.5

const WORKFLOW = `export default async function run(ctx, inputs) {
  if (inputs.kind === 'step') return inputs.input.n * 2
  const ids = Array.from({ length: ${STEPS} }, (_, i) => i)
  const missing = ids.filter((n) => !(('s' + n) in inputs.step_outputs))
  if (missing.length > 0)
    return { type: 'schedule_steps', steps: missing.map((n) => ({ step_id: 's' + n, step_name: 'double', input: { n } })) }
  return { type: 'complete', output: ids.reduce((sum, n) => sum + inputs.step_outputs['s' + n], 0) }
}`

const PROGRAM = (n: number) => `return ${n} * 2`

let runs = 0

async function workflowSide(session: Session): Promise<number> {
  const r = await session.tool('dynamic_workflow', {
    source: WORKFLOW,
    run_id: `bench-${++runs}`,
    limits: { maxConcurrentSteps: 1, timeoutMs: 600_000 },
  })
  if (r.exitCode !== 0) throw new Error(`workflow failed: ${r.output}`)
  return Number(JSON.parse(r.output))
}

async function programSide(session: Session): Promise<number> {
  let sum = 0
  for (let n = 0; n < STEPS; n++) {
    const r = await session.tool('program', { source: PROGRAM(n) })
    if (r.exitCode !== 0) throw new Error(`program failed: ${r.output}`)
    sum += Number(r.output)
  }
  return sum
}

async function timed(op: () => Promise<number>): Promise<{ ms: number; value: number }> {
  const t = performance.now()
  const value = await op()
  return { ms: performance.now() - t, value }
}

interface Result {
  label: string
  workflowMs: number
  programMs: number
  ratio: number
}

async function measure(label: string, session: Session): Promise<Result> {
  // Untimed once each: warms QuickJS and the store, and gives the outputs to compare.
  const [w, p] = [await workflowSide(session), await programSide(session)]
  if (w !== p) throw new Error(`outputs differ: workflow ${w}, programs ${p}`)
  const wf: number[] = []
  const pr: number[] = []
  const ratios: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    collectGarbage()
    const first = round % 2 === 0 ? workflowSide : programSide
    const a = await timed(() => first(session))
    const b = await timed(() => (first === workflowSide ? programSide : workflowSide)(session))
    const [wMs, pMs] = first === workflowSide ? [a.ms, b.ms] : [b.ms, a.ms]
    wf.push(wMs)
    pr.push(pMs)
    ratios.push(wMs / pMs)
  }
  return { label, workflowMs: median(wf), programMs: median(pr), ratio: median(ratios) }
}

async function withStore(label: string, store: WorkflowStore | undefined, root?: string) {
  const workspace = root === undefined ? memoryWorkspace({}) : localWorkspace(root)
  const session = await Agent.create().session(workspace, {
    workflows: store === undefined ? {} : { store },
  })
  try {
    return await measure(label, session)
  } finally {
    await session.close()
  }
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'isoagent-bench-wf-'))
  try {
    const results = [
      await withStore('memory store', memoryWorkflowStore()),
      await withStore('file store, local disk (fsync)', undefined, root),
    ]
    console.log(`dynamic_workflow: ${STEPS} steps vs ${STEPS} program calls, ${ROUNDS} rounds`)
    console.log(machineLine())
    console.log('')
    console.log('| store | workflow (ms) | programs (ms) | per step (ms) | ratio | goal |')
    console.log('| --- | ---: | ---: | ---: | ---: | --- |')
    for (const r of results)
      console.log(
        `| ${r.label} | ${r.workflowMs.toFixed(1)} | ${r.programMs.toFixed(1)} | ${(r.workflowMs / STEPS).toFixed(2)} | ${r.ratio.toFixed(2)}× | ${r.ratio <= GOAL ? 'met' : 'missed'} (≤ ${GOAL}×) |`,
      )
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

await main()
