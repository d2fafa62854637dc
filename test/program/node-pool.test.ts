// The Node runner's pool of warm worker threads, on real threads: programs one after another
// reuse the warm workers (none started and retired per program), concurrent ones get threads up
// to maxWorkers, and the pool settles back to warmWorkers idle threads afterwards.
import { afterEach, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace, setDefaultProgramRunner } from '../../adapters/index.ts'
import {
  createNodeProgramRunner,
  nodeProgramRunner,
  type NodeProgramRunner,
} from '../../adapters/node/index.ts'

let runner: NodeProgramRunner | undefined
afterEach(async () => {
  setDefaultProgramRunner(nodeProgramRunner)
  await runner?.close()
  runner = undefined
})

/** A session whose `program` tool runs on `r` (the runner is read at each call). */
async function sessionWith(r: NodeProgramRunner) {
  setDefaultProgramRunner(r)
  return Agent.create().session(memoryWorkspace({ 'a.txt': 'alpha\n' }))
}

describe('Node program runner pool', () => {
  it('100 programs in a row start only the warm workers, and retire none', async () => {
    runner = createNodeProgramRunner({ warmWorkers: 2 })
    const session = await sessionWith(runner)
    for (let i = 0; i < 100; i++) {
      const reply = await session.tool('program', { source: `return ${i} + 1` })
      expect(reply.output).toBe(String(i + 1))
    }
    // Top-ups run after each outcome: let the last one happen.
    await new Promise((r) => setTimeout(r, 50))
    expect(runner.stats()).toEqual({ busy: 0, idle: 2, spawned: 2, terminated: 0 })
    await session.close()
  })

  it('concurrent programs use up to maxWorkers threads, then two stay warm', async () => {
    runner = createNodeProgramRunner({ warmWorkers: 2, maxWorkers: 4 })
    const session = await sessionWith(runner)
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        session.tool('program', { source: `await ctx.readFile('a.txt'); return ${i}` }),
      ),
    )
    expect(replies.map((r) => r.output)).toEqual(Array.from({ length: 12 }, (_, i) => String(i)))
    await new Promise((r) => setTimeout(r, 50))
    const stats = runner.stats()
    expect(stats.busy).toBe(0)
    expect(stats.idle).toBe(2)
    expect(stats.spawned).toBeLessThanOrEqual(4)
    expect(stats.spawned - stats.terminated).toBe(2)
    await session.close()
  })
})
