// Steps waiting for an admission permit share one abort listener on the drive's signal: a
// command scheduling hundreds of steps left one listener per waiter (a MaxListeners warning,
// and listeners piling up on a long run).
import { expect, it } from 'vitest'
import { Agent, memoryWorkflowStore, memoryWorkspace } from '../../adapters/index.ts'

it('schedules 200 steps behind one permit without piling listeners on the drive signal', async () => {
  const warnings: string[] = []
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`)
  process.on('warning', onWarning)
  try {
    const s = await Agent.create().session(memoryWorkspace({}), {
      workflows: { store: memoryWorkflowStore() },
    })
    const r = await s.tool('dynamic_workflow', {
      source: `export default async function run(ctx, inputs) {
        if (inputs.kind === 'step') return 1
        const n = Object.keys(inputs.step_outputs).length
        if (n < 200) return { type: 'schedule_steps', steps: Array.from({ length: 200 }, (_, i) => ({ step_id: 's' + i, step_name: 'one', input: {} })) }
        return { type: 'complete', output: n }
      }`,
      limits: { maxConcurrentSteps: 1, maxOutputBytes: 1_048_576 },
    })
    expect(r.exitCode, r.output).toBe(0)
    expect(r.output).toBe('200')
    await new Promise((done) => setTimeout(done, 20))
    expect(warnings.filter((w) => w.includes('MaxListeners'))).toEqual([])
    await s.close()
  } finally {
    process.off('warning', onWarning)
  }
}, 60_000)
