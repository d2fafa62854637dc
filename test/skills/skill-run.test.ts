// Issue 30, the parts of a Skill run not covered by skills.test.ts: the skill_started /
// skill_finished events, the result's usage and changed_paths, a persona in place of the role
// section and the catalog in the loop's system prompt (≤ 8,000 chars), the parent's budget and
// cancellation reaching the child run, and 5,000 skills refused in bounded time and memory.
// All against the loopback fake provider (real HTTP on 127.0.0.1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  Agent,
  memoryWorkspace,
  openAICompatible,
  type SessionEvent,
} from '../../adapters/index.ts'
import { startFakeProvider, type FakeProvider } from '../llm/fake-provider.ts'

const skill = (fm: string, body = 'Do the thing.\n') => `---\n${fm}\n---\n${body}`

const FILES: Record<string, string> = {
  '.agents/skills/scribe/SKILL.md': skill(
    'name: scribe\ndescription: Writes files as asked.\nallowed-tools: "*"',
    'Write what you are told.\n',
  ),
  '.agents/skills/reader.md': skill(
    'name: reader\ndescription: Reads the changelog.\nallowed-tools: Read',
  ),
  '.claude/skills/pirate/SKILL.md': skill(
    'name: pirate\ndescription: Talks like a pirate.\nkind: persona',
    'You are a pirate captain. Answer in pirate speak.\n',
  ),
  'CHANGELOG.md': '## 1.0\n- first\n',
}

let fake: FakeProvider
beforeAll(async () => {
  fake = await startFakeProvider()
})
afterAll(() => fake.close())

const modelFor = (id: string) =>
  openAICompatible({ baseURL: fake.baseURL, apiKey: 'k', model: id, retryDelayMs: 5 })
const sentTo = (id: string) => fake.requests.filter((r) => r.body.model === id)

function collect(session: { events(): AsyncIterableIterator<SessionEvent> }) {
  const events: SessionEvent[] = []
  const done = (async () => {
    for await (const e of session.events()) events.push(e)
  })()
  return { events, done }
}

function systemOf(body: Record<string, unknown>): string {
  const messages = body.messages as { role: string; content: unknown }[]
  const system = messages.find((m) => m.role === 'system')
  return typeof system?.content === 'string' ? system.content : JSON.stringify(system?.content)
}

describe('a Skill run with a model', () => {
  it('emits skill_loaded, skill_started, skill_finished in order and reports usage and changed_paths', async () => {
    const id = 'run-meta'
    fake.program(id, [
      {
        toolCalls: [
          { name: 'write', arguments: JSON.stringify({ file_path: 'out/b.md', content: 'b' }) },
          { name: 'write', arguments: JSON.stringify({ file_path: 'a.md', content: 'a' }) },
        ],
        usage: { input: 100, output: 5 },
      },
      { text: 'Written.', usage: { input: 130, output: 7 } },
    ])
    const workspace = memoryWorkspace(FILES)
    const session = await Agent.create({ model: modelFor(id) }).session(workspace)
    const { events, done } = collect(session)
    const result = await session.governedTool('Skill', { skill_name: 'scribe', prompt: 'write' })
    await session.close()
    await done
    expect(result.exitCode, result.output).toBe(0)
    expect(result.output).toBe('Written.')
    expect(result.metadata).toMatchObject({
      skill_name: 'scribe',
      tool_calls: 2,
      usage: { inputTokens: 230, outputTokens: 12 },
      changed_paths: ['a.md', 'out/b.md'],
    })
    expect(new TextDecoder().decode(await workspace.read('out/b.md' as never))).toBe('b')
    const mine = events
      .filter((e) => e.type.startsWith('skill_'))
      .map((e) => ({ type: e.type, ...('skill' in e ? { skill: e.skill } : {}) }))
    expect(mine).toEqual([
      { type: 'skill_loaded', skill: 'scribe' },
      { type: 'skill_started', skill: 'scribe' },
      { type: 'skill_finished', skill: 'scribe' },
    ])
    const finished = events.find((e) => e.type === 'skill_finished') as { exitCode?: number }
    expect(finished.exitCode).toBe(0)
  })

  it('a read-only run reports no changed paths', async () => {
    const id = 'run-read'
    fake.program(id, [
      { toolCalls: [{ name: 'read', arguments: JSON.stringify({ file_path: 'CHANGELOG.md' }) }] },
      { text: 'Read it.' },
    ])
    const session = await Agent.create({ model: modelFor(id) }).session(memoryWorkspace(FILES))
    const result = await session.governedTool('Skill', { skill_name: 'reader' })
    expect(result.metadata).toMatchObject({ tool_calls: 1, changed_paths: [] })
    await session.close()
  })

  it("charges the parent's budget: the child's calls count, and the limit stops the child", async () => {
    const id = 'run-budget'
    const read = { name: 'read', arguments: JSON.stringify({ file_path: 'CHANGELOG.md' }) }
    fake.program(id, [{ toolCalls: [read] }, { toolCalls: [read] }, { text: 'done' }])
    const session = await Agent.create({ model: modelFor(id) }).session(memoryWorkspace(FILES), {
      budget: { maxToolCalls: 2 },
    })
    const result = await session.governedTool('Skill', { skill_name: 'reader' })
    expect(result.exitCode, result.output).toBe(0)
    // Skill itself (1) + the child's first read (2); the second read is over the budget.
    expect(session.snapshot().budget.used.tool_calls).toBe(2)
    const third = JSON.stringify(sentTo(id)[2]!.body)
    expect(third).toContain('budget exhausted: maxToolCalls=2')
    // The parent is now out of budget too: the child's calls were its calls.
    const after = await session.governedTool('read', { file_path: 'CHANGELOG.md' })
    expect(after.exitCode).toBe(1)
    await session.close()
  })

  it('cancelling the parent call cancels the child run; skill_finished reports the failure', async () => {
    const id = 'run-cancel'
    // Uncancelled, the child would get this read after 3 s and ask the model again.
    const read = { name: 'read', arguments: JSON.stringify({ file_path: 'CHANGELOG.md' }) }
    fake.program(id, [{ toolCalls: [read], delayMs: 3000 }, { text: 'never asked' }])
    const session = await Agent.create({ model: modelFor(id) }).session(memoryWorkspace(FILES))
    const { events, done } = collect(session)
    const controller = new AbortController()
    const started = Date.now()
    const pending = session.governedTool(
      'Skill',
      { skill_name: 'reader' },
      { signal: controller.signal },
    )
    while (sentTo(id).length === 0) await new Promise((r) => setTimeout(r, 10))
    controller.abort()
    const result = await pending
    const elapsed = Date.now() - started
    expect(result.exitCode).toBe(1)
    expect(result.errorKind?.type).toBe('cancelled')
    expect(elapsed).toBeLessThan(2500)
    await new Promise((r) => setTimeout(r, 3500))
    expect(sentTo(id)).toHaveLength(1)
    await session.close()
    await done
    const finished = events.filter((e) => e.type === 'skill_finished')
    expect(finished).toHaveLength(1)
    expect((finished[0] as { exitCode?: number }).exitCode).toBe(1)
  })
})

describe("the loop's system prompt", () => {
  it('a persona skill replaces the role section; the catalog lists discoverable skills', async () => {
    const id = 'persona'
    fake.program(id, [{ text: 'Arr.' }])
    const agent = Agent.create({ model: modelFor(id), system: 'ROLE: a careful engineer.' })
    const session = await agent.session(memoryWorkspace(FILES), { skills: { persona: 'pirate' } })
    await session.send('hello')
    const system = systemOf(sentTo(id)[0]!.body)
    expect(system).toContain('You are a pirate captain. Answer in pirate speak.')
    expect(system).not.toContain('ROLE: a careful engineer.')
    expect(system).toContain('- scribe: Writes files as asked.')
    expect(system).toContain('- reader: Reads the changelog.')
    expect(system).not.toContain('- pirate:')
    await session.close()
  })

  it('without a persona the role section stays', async () => {
    const id = 'no-persona'
    fake.program(id, [{ text: 'ok' }])
    const agent = Agent.create({ model: modelFor(id), system: 'ROLE: a careful engineer.' })
    const session = await agent.session(memoryWorkspace(FILES))
    await session.send('hello')
    const system = systemOf(sentTo(id)[0]!.body)
    expect(system.startsWith('ROLE: a careful engineer.')).toBe(true)
    expect(system).toContain('- scribe: Writes files as asked.')
    await session.close()
  })

  it('an unknown persona is a typed refusal', async () => {
    const agent = Agent.create({ model: modelFor('x') })
    await expect(
      agent.session(memoryWorkspace(FILES), { skills: { persona: 'scribe' } }),
    ).rejects.toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/persona/) })
  })

  it('the catalog stays within 8,000 characters with many long descriptions', async () => {
    const id = 'catalog'
    fake.program(id, [{ text: 'ok' }])
    const inline = Array.from({ length: 300 }, (_, i) => ({
      name: `skill-${String(i).padStart(3, '0')}`,
      description: `Long description ${i} `.repeat(20),
    }))
    const session = await Agent.create({ model: modelFor(id) }).session(memoryWorkspace(), {
      skills: { inline },
    })
    await session.send('hello')
    const system = systemOf(sentTo(id)[0]!.body)
    expect(system.length).toBeLessThanOrEqual(8000)
    expect(system).toContain('- skill-000: Long description 0')
    expect(system).toMatch(/- … and \d+ more \(use search_skills\)$/)
    await session.close()
  })
})

describe('5,000 skills', () => {
  it('keeps the first 2,000 and reports the rest skipped, in bounded time and memory', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 5000; i++) {
      const name = `s-${String(i).padStart(4, '0')}`
      files[`.agents/skills/${name}.md`] = skill(`name: ${name}\ndescription: skill ${i}`)
    }
    const workspace = memoryWorkspace(files)
    globalThis.gc?.()
    const heapBefore = process.memoryUsage().heapUsed
    const started = Date.now()
    const session = await Agent.create().session(workspace)
    const elapsed = Date.now() - started
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore
    const report = session.skills()
    expect(report.skills).toHaveLength(2000)
    expect(report.skills[0]!.name).toBe('s-0000')
    expect(report.skills.at(-1)!.name).toBe('s-1999')
    expect(report.diagnostics).toContainEqual({
      path: '.agents/skills',
      message: 'more than 2000 skills: the rest are skipped',
    })
    expect(elapsed).toBeLessThan(20_000)
    expect(heapGrowth).toBeLessThan(256 * 1024 * 1024)
    const search = await session.tool('search_skills', { query: 'skill 4999' })
    expect(search.exitCode).toBe(0)
    expect(search.output).not.toContain('s-4999')
    await session.close()
  }, 60_000)

  it('refuses more than 2,000 inline skills, and an addSkill past 2,000 added ones, typed', async () => {
    const inline = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        name: `i-${String(i).padStart(4, '0')}`,
        description: `inline ${i}`,
        body: 'Do it.',
      }))
    await expect(
      Agent.create().session(memoryWorkspace({}), { skills: { inline: inline(5000) } }),
    ).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringMatching(/5000 skills, more than 2000/),
    })
    const session = await Agent.create().session(memoryWorkspace({}))
    for (const s of inline(2000)) session.addSkill(s)
    expect(() => session.addSkill({ name: 'one-more', description: 'x', body: 'Do it.' })).toThrow(
      /more than 2000 added skills/,
    )
    session.addSkill({ name: 'i-0000', description: 'replaced', body: 'Do it again.' })
    expect(session.skills().skills).toHaveLength(2000)
    await session.close()
  }, 60_000)
})
