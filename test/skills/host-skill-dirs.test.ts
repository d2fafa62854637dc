// Issue 30: on Node, `hostSkillDirs` adds host folders of skills outside the session's workspace;
// they are listed, searched and run like workspace skills. Host skills come after the
// workspace's (a duplicate name from the host wins) and before inline ones.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace } from '../../adapters/index.ts'
import { hostSkillDirs, localWorkspace } from '../../adapters/node/index.ts'

const skill = (fm: string, body = 'Do the thing.\n') => `---\n${fm}\n---\n${body}`

describe('hostSkillDirs (Node)', () => {
  let host = ''
  let work = ''
  let outside = ''
  beforeAll(() => {
    host = mkdtempSync(join(tmpdir(), 'isoagent-host-skills-'))
    work = mkdtempSync(join(tmpdir(), 'isoagent-host-work-'))
    outside = mkdtempSync(join(tmpdir(), 'isoagent-host-out-'))
    mkdirSync(join(host, 'deploy'), { recursive: true })
    writeFileSync(
      join(host, 'deploy/SKILL.md'),
      skill(
        'name: deploy\ndescription: Deploy the service to staging.',
        'Run the deploy script.\n',
      ),
    )
    writeFileSync(join(host, 'deploy/run.sh'), 'echo deploy\n')
    writeFileSync(join(host, 'shared.md'), skill('name: shared\ndescription: from the host'))
    writeFileSync(join(host, 'broken.md'), '---\nname: [x\n---\n')
    writeFileSync(join(outside, 'evil.md'), skill('name: evil\ndescription: outside'))
    symlinkSync(join(outside, 'evil.md'), join(host, 'evil.md'))
    mkdirSync(join(work, '.agents/skills'), { recursive: true })
    writeFileSync(
      join(work, '.agents/skills/shared.md'),
      skill('name: shared\ndescription: from the workspace'),
    )
  })
  afterAll(() => {
    for (const d of [host, work, outside]) rmSync(d, { recursive: true, force: true })
  })

  it('finds, searches and runs a skill of a host folder outside the workspace', async () => {
    const session = await Agent.create().session(localWorkspace(work), {
      skills: { host: hostSkillDirs(host, join(host, 'missing')) },
    })
    const report = session.skills()
    expect(report.skills.map((s) => s.name)).toEqual(['deploy', 'shared'])
    expect(report.skills.find((s) => s.name === 'deploy')!.source).toEqual({
      kind: 'host',
      path: join(host, 'deploy/SKILL.md'),
    })
    // Host folders come after the workspace's: a duplicate name from the host wins.
    expect(report.skills.find((s) => s.name === 'shared')).toMatchObject({
      description: 'from the host',
      source: { kind: 'host', path: join(host, 'shared.md') },
    })
    const skipped = report.diagnostics.map((d) => d.path).sort()
    expect(skipped).toEqual([join(host, 'broken.md'), join(host, 'evil.md')])
    const found = await session.tool('search_skills', { query: 'deploy staging' })
    expect(found.output).toContain('- deploy (instruction): Deploy the service to staging.')
    const run = await session.tool('Skill', { skill_name: 'deploy' })
    expect(run.exitCode).toBe(0)
    expect(run.output).toBe(
      `# Skill: deploy\n\nRun the deploy script.\n\nBundled files (read them when the instructions say so):\n- skill://deploy/run.sh`,
    )
    await session.close()
  })

  it('works with any workspace, and inline skills still win', async () => {
    const session = await Agent.create().session(memoryWorkspace(), {
      skills: {
        host: hostSkillDirs(host),
        inline: [{ name: 'deploy', description: 'inline deploy', body: 'inline' }],
      },
    })
    expect(session.skills().skills.find((s) => s.name === 'deploy')).toMatchObject({
      description: 'inline deploy',
      source: { kind: 'inline' },
    })
    expect(session.skills().skills.map((s) => s.name)).toEqual(['deploy', 'shared'])
    await session.close()
  })
})
