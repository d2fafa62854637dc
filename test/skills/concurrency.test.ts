// Skills with two callers and files that move under them: two sessions adding, searching and
// loading skills at once over one workspace (each sees its own live skills only); a skill file
// edited, broken, renamed, grown or deleted between search_skills and Skill (the current body,
// or a typed failure — never a stale or cut body); names that try to leave the skill folders.
import { mkdtempSync, mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'

const skill = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}`

describe('two sessions at once', () => {
  it('add, search and load skills concurrently over one workspace, each its own', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 50; i++)
      files[`.agents/skills/base-${i}/SKILL.md`] = skill(`base-${i}`, `Shared skill ${i}`, `B${i}`)
    const shared = memoryWorkspace(files)
    const [a, b] = await Promise.all([
      Agent.create().session(shared),
      Agent.create().session(shared),
    ])
    try {
      const work = (session: typeof a, who: string) =>
        Array.from({ length: 30 }, async (_, i) => {
          session.addSkill({
            name: `${who}-live-${i}`,
            description: `${who} only ${i}`,
            body: `${who}${i}`,
          })
          const [found, loaded, shared] = await Promise.all([
            session.tool('search_skills', { query: `${who}-live-${i}`, limit: 1 }),
            session.tool('Skill', { skill_name: `${who}-live-${i}` }),
            session.tool('Skill', { skill_name: `base-${i}` }),
          ])
          expect(found.output).toContain(`- ${who}-live-${i} (instruction)`)
          expect(loaded.output).toContain(`${who}${i}`)
          expect(shared.output).toContain(`B${i}`)
        })
      await Promise.all([...work(a, 'a'), ...work(b, 'b')])
      const names = (s: typeof a) => s.skills().skills.map((x) => x.name)
      expect(names(a).filter((n) => n.startsWith('b-live'))).toEqual([])
      expect(names(b).filter((n) => n.startsWith('a-live'))).toEqual([])
      expect(names(a)).toHaveLength(80)
      const miss = await a.tool('Skill', { skill_name: 'b-live-3' })
      expect(miss).toMatchObject({ exitCode: 1, output: "Skill 'b-live-3' not found" })
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })
})

describe('a skill file that changes between search and load', () => {
  let dir: string
  const path = () => join(dir, '.agents/skills/deploy/SKILL.md')
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'isoagent-skills-race-'))
    mkdirSync(join(dir, '.agents/skills/deploy'), { recursive: true })
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  async function searched() {
    writeFileSync(path(), skill('deploy', 'Deploy the app', 'Version one.\n'))
    const session = await Agent.create().session(localWorkspace(dir))
    const found = await session.tool('search_skills', { query: 'deploy' })
    expect(found.output).toContain('- deploy (instruction): Deploy the app')
    return session
  }

  it('edited: Skill gives the body as it is now', async () => {
    const session = await searched()
    writeFileSync(path(), skill('deploy', 'Deploy the app', 'Version two.\n'))
    const r = await session.tool('Skill', { skill_name: 'deploy' })
    expect(r.exitCode).toBe(0)
    expect(r.output).toContain('Version two.')
    expect(r.output).not.toContain('Version one.')
    await session.close()
  })

  it('broken, renamed, grown past 1 MiB or deleted: a typed failure, no stale body', async () => {
    const cases: [() => void, string, RegExp][] = [
      [
        () => writeFileSync(path(), '---\nname: [deploy\n---\nx'),
        'version_conflict',
        /no longer parses/,
      ],
      [
        () => writeFileSync(path(), skill('other', 'x', 'y')),
        'version_conflict',
        /now names skill "other"|does not match its folder/,
      ],
      [
        () => writeFileSync(path(), skill('deploy', 'Deploy', 'x'.repeat(2 * 1024 * 1024))),
        'invalid_argument', // too_large, as tool results type it
        /grew past 1048576 bytes/,
      ],
      [() => unlinkSync(path()), 'not_found', /could not be loaded/],
    ]
    for (const [change, kind, message] of cases) {
      const session = await searched()
      change()
      const r = await session.tool('Skill', { skill_name: 'deploy' })
      expect(r.exitCode, kind).toBe(1)
      expect(r.errorKind?.type, r.output).toBe(kind)
      expect(r.output).toMatch(message)
      expect(r.output).not.toContain('Version one.')
      await session.close()
    }
  })
})

describe('names that try to leave the skill folders', () => {
  it('are unknown skills or refused, typed', async () => {
    const session = await Agent.create().session(
      memoryWorkspace({
        '.agents/skills/ok/SKILL.md': skill('ok', 'fine', 'Fine.'),
        'secret.md': skill('secret', 'not a skill', 'TOP SECRET'),
      }),
    )
    try {
      for (const name of [
        '../secret',
        '../../secret.md',
        '/secret',
        'ok/../../secret',
        '%2e%2e/secret',
      ])
        expect(await session.tool('Skill', { skill_name: name })).toMatchObject({
          exitCode: 1,
          output: `Skill '${name}' not found`,
        })
      expect(() => session.addSkill({ name: '../escape', description: 'x', body: 'x' })).toThrow(
        expect.objectContaining({ code: 'invalid_argument' }),
      )
      expect(session.skills().skills.map((s) => s.name)).toEqual(['ok'])
    } finally {
      await session.close()
    }
  })
})
