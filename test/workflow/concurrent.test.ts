// Two callers driving one run id at once over one store: the journal's conditional appends let
// exactly one of them record each event, so every step runs once and a loser fails typed.
import { expect, it } from 'vitest'
import { Agent, memoryWorkflowStore, memoryWorkspace, WorkspacePath } from '../../adapters/index.ts'

const SOURCE = `export default async function run(ctx, inputs) {
  if (inputs.kind === 'step') {
    await ctx.tool('write', { file_path: 'ran/' + inputs.step_id + '-' + Math.random().toString(36).slice(2), content: 'x' })
    return 1
  }
  const missing = ['a', 'b', 'c'].filter((id) => !(id in inputs.step_outputs))
  if (missing.length > 0)
    return { type: 'schedule_steps', steps: missing.map((id) => ({ step_id: id, step_name: 'w', input: {} })) }
  return { type: 'complete', output: 'done' }
}`

it('two sessions driving one run at once: each step runs once', async () => {
  const store = memoryWorkflowStore()
  const workspace = memoryWorkspace()
  const [s1, s2] = await Promise.all([
    Agent.create().session(workspace, { workflows: { store } }),
    Agent.create().session(workspace, { workflows: { store } }),
  ])
  const results = await Promise.all(
    [s1, s2].map((s) => s.tool('dynamic_workflow', { source: SOURCE, run_id: 'shared' })),
  )
  const ran = (await workspace.list(WorkspacePath.parse('ran'))).entries.map((e) => e.name[0])
  expect(ran.sort()).toEqual(['a', 'b', 'c'])
  // Each caller either finished the run or was refused typed by the journal (never a crash).
  for (const r of results)
    if (r.exitCode === 0) expect(r.output).toBe('"done"')
    else expect(r.errorKind?.type, r.output).toEqual(expect.any(String))
  const again = await s1.tool('dynamic_workflow', { source: SOURCE, run_id: 'shared' })
  expect(again).toMatchObject({ exitCode: 0, output: '"done"' })
  await s1.close()
  await s2.close()
})
