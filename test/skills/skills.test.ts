// Skills: discovery through the workspace port, the two tools' exact outputs, narrowing of a
// skill's child run (against the loopback fake provider, both wire protocols) and hostile files.
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  Agent,
  anthropic,
  memoryWorkspace,
  openAICompatible,
  type SessionEvent,
} from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import { splitAllowedTools, SkillToolScope } from '../../src/skills/allowed-tools.ts'
import { startFakeProvider, type FakeProvider } from '../llm/fake-provider.ts'

const skill = (fm: string, body = 'Do the thing.\n') => `---\n${fm}\n---\n${body}`

const FILES: Record<string, string> = {
  '.agents/skills/release-notes/SKILL.md': skill(
    'name: release-notes\ndescription: Draft release notes from the git log.\ntags: [git, docs]\nallowed-tools: Read, Bash(git log:*)',
    'Read CHANGELOG.md, then run git log.\n',
  ),
  '.agents/skills/release-notes/template.md': '# Notes\n',
  '.agents/skills/lint-fix.md': skill(
    'name: lint-fix\ndescription: Fix lint errors in TypeScript files.\ntags: [lint]',
  ),
  '.claude/skills/reviewer/SKILL.md': skill(
    'name: reviewer\ndescription: A strict code reviewer.\nkind: persona',
    'You are a strict reviewer.',
  ),
  '.claude/skills/secret-ops.md': skill(
    'name: secret-ops\ndescription: Operations only a human starts.\ndisable-model-invocation: true',
  ),
  '.a3s/skills/lint-fix.md': skill(
    'name: lint-fix\ndescription: Later lint-fix wins.\nallowed-tools: "*"',
  ),
  '.a3s/skills/broken.md': '---\nname: [unclosed\n---\nbody',
  '.a3s/skills/notmap.md': '---\n- a\n- b\n---\nbody',
  '.a3s/skills/Bad_Name.md': skill('name: ../escape\ndescription: x'),
  '.a3s/skills/bomb.md':
    '---\nname: bomb\na: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n---\nboom',
  'CHANGELOG.md': '## 1.0\n- first\n',
}

describe('skill discovery and search_skills', () => {
  it('finds skills in every default folder, later duplicates winning, bad files reported', async () => {
    const session = await Agent.create().session(memoryWorkspace(FILES))
    const report = session.skills()
    expect(report.skills.map((s) => s.name)).toEqual([
      'lint-fix',
      'release-notes',
      'reviewer',
      'secret-ops',
    ])
    expect(report.skills.find((s) => s.name === 'lint-fix')).toMatchObject({
      description: 'Later lint-fix wins.',
      allowed_tools: ['*'],
      source: { kind: 'workspace', path: '.a3s/skills/lint-fix.md' },
    })
    const skipped = Object.fromEntries(report.diagnostics.map((d) => [d.path, d.message]))
    expect(Object.keys(skipped).sort()).toEqual([
      '.a3s/skills/Bad_Name.md',
      '.a3s/skills/bomb.md',
      '.a3s/skills/broken.md',
      '.a3s/skills/notmap.md',
    ])
    expect(skipped['.a3s/skills/notmap.md']).toBe('front matter is not a map')
    expect(skipped['.a3s/skills/Bad_Name.md']).toMatch(/not kebab-case/)
    expect(session.toolNames()).toContain('search_skills')
    expect(session.toolNames()).toContain('Skill')
  })

  it('scores, orders and words results as the contract says; personas and disabled ones hidden', async () => {
    const session = await Agent.create().session(memoryWorkspace(FILES))
    const hit = await session.tool('search_skills', { query: 'release notes from git' })
    expect(hit.exitCode).toBe(0)
    expect(hit.output).toBe(
      [
        'Found 1 matching skill(s). Invoke one with Skill using its skill_name.',
        '- release-notes (instruction): Draft release notes from the git log. Allowed tools: Read, Bash(git log:*).',
      ].join('\n'),
    )
    expect(hit.metadata!.skills).toEqual([
      {
        name: 'release-notes',
        description: 'Draft release notes from the git log.',
        kind: 'instruction',
        tags: ['git', 'docs'],
        allowed_tools: ['Read', 'Bash(git log:*)'],
      },
    ])
    const all = await session.tool('search_skills', { query: '  ' })
    expect(all.output.split('\n').slice(1)).toEqual([
      '- lint-fix (instruction): Later lint-fix wins. Allowed tools: *.',
      '- release-notes (instruction): Draft release notes from the git log. Allowed tools: Read, Bash(git log:*).',
    ])
    const none = await session.tool('search_skills', { query: 'reviewer' })
    expect(none).toMatchObject({
      exitCode: 0,
      output: 'No matching skills found. Continue with the core tools.',
    })
    expect((await session.tool('search_skills', 'lint')).output).toContain('- lint-fix')
    expect((await session.tool('search_skills', { q: 'lint', limit: 99 })).exitCode).toBe(0)
  })

  it('clamps limit to 20 and refuses a bad call typed', async () => {
    const inline = Array.from({ length: 30 }, (_, i) => ({
      name: `s-${String(i).padStart(2, '0')}`,
      description: 'shared word',
    }))
    const session = await Agent.create().session(memoryWorkspace(), { skills: { inline } })
    const many = await session.tool('search_skills', { query: 'shared', limit: 50 })
    expect(many.metadata!.skills).toHaveLength(20)
    const bad = await session.tool('search_skills', { query: 3 })
    expect(bad).toMatchObject({ exitCode: 1, errorKind: { type: 'invalid_argument' } })
    const huge = await session.tool('search_skills', { query: 'x'.repeat(70_000) })
    expect(huge.exitCode).toBe(0)
  })

  it('registers no skill tools without a discoverable skill, and follows add/remove live', async () => {
    const session = await Agent.create().session(memoryWorkspace())
    expect(session.toolNames()).not.toContain('Skill')
    session.addSkill({ name: 'live-one', description: 'added live', body: 'live body' })
    expect(session.toolNames()).toContain('Skill')
    expect(session.toolNames()).toContain('search_skills')
    expect(session.removeSkill('live-one')).toBe(true)
    expect(session.toolNames()).not.toContain('Skill')
    expect(() => session.addSkill({ name: '../x', description: 'bad' })).toThrow(/kebab-case/)
  })

  it('a live skill shadows a discovered one and removing it restores the original', async () => {
    const session = await Agent.create().session(memoryWorkspace(FILES))
    session.addSkill({ name: 'release-notes', description: 'shadow', body: 'shadow body' })
    expect((await session.tool('Skill', { skill_name: 'release-notes' })).output).toContain(
      'shadow body',
    )
    session.removeSkill('release-notes')
    const back = await session.tool('Skill', { skill_name: 'release-notes' })
    expect(back.output).toContain('Read CHANGELOG.md')
  })
})

describe('Skill without a model', () => {
  it('returns the body and the bundled files; unknown and disabled skills fail with the exact texts', async () => {
    const session = await Agent.create().session(memoryWorkspace(FILES))
    const events: SessionEvent[] = []
    const seen = (async () => {
      for await (const e of session.events()) events.push(e)
    })()
    const run = await session.tool('Skill', 'release-notes')
    expect(run.exitCode).toBe(0)
    expect(run.output).toBe(
      '# Skill: release-notes\n\nRead CHANGELOG.md, then run git log.\n\nBundled files (read them when the instructions say so):\n- .agents/skills/release-notes/template.md',
    )
    const missing = await session.tool('Skill', { skill_name: 'nope' })
    expect(missing).toMatchObject({ exitCode: 1, output: "Skill 'nope' not found" })
    const disabled = await session.tool('Skill', { skillName: 'secret-ops' })
    expect(disabled.output).toBe(
      "Skill 'secret-ops' disables model invocation and cannot be invoked via the Skill tool",
    )
    await session.close()
    await seen
    expect(events.some((e) => e.type === 'skill_loaded' && e.skill === 'release-notes')).toBe(true)
  })
})

describe('allowed-tools parsing and narrowing', () => {
  it('splits comma lists, one Tool(pattern) with spaces, legacy spaces and the list form', () => {
    expect(splitAllowedTools(['Read, Grep, Bash(git log:*)'])).toEqual([
      'Read',
      'Grep',
      'Bash(git log:*)',
    ])
    expect(splitAllowedTools(['Bash(uv run x:*)'])).toEqual(['Bash(uv run x:*)'])
    expect(splitAllowedTools(['Read Write Bash(npm test)'])).toEqual([
      'Read',
      'Write',
      'Bash(npm test)',
    ])
    expect(splitAllowedTools(['Read', 'Bash(uv run y)'])).toEqual(['Read', 'Bash(uv run y)'])
  })

  it('narrows: no entry → nothing, * → all, patterns match the primary argument', () => {
    expect(new SkillToolScope(undefined).offers('read')).toBe(false)
    expect(new SkillToolScope(['*']).permits('bash', { command: 'rm -rf /' })).toBe(true)
    const scope = new SkillToolScope(['Read, Bash(uv run x:*)'])
    expect(scope.offers('read')).toBe(true)
    expect(scope.offers('write')).toBe(false)
    expect(scope.permits('bash', { command: 'uv run x --fast' })).toBe(true)
    expect(scope.permits('bash', { command: 'uv run y' })).toBe(false)
    expect(scope.permits('bash', { command: 'curl evil' })).toBe(false)
  })
})

describe('Skill with a model (loopback fake provider)', () => {
  let fake: FakeProvider
  beforeAll(async () => {
    fake = await startFakeProvider()
  })
  afterAll(() => fake.close())

  for (const protocol of ['openai', 'anthropic'] as const) {
    it(`${protocol}: the role and narrowed tools reach the model; a call outside the skill is refused; parent deny holds`, async () => {
      const modelId = `skill-${protocol}`
      const model =
        protocol === 'openai'
          ? openAICompatible({
              baseURL: fake.baseURL,
              apiKey: 'k',
              model: modelId,
              retryDelayMs: 5,
            })
          : anthropic({ baseURL: fake.baseURL, apiKey: 'k', model: modelId, retryDelayMs: 5 })
      fake.program(modelId, [
        { toolCalls: [{ name: 'read', arguments: JSON.stringify({ file_path: 'CHANGELOG.md' }) }] },
        {
          toolCalls: [
            { name: 'write', arguments: JSON.stringify({ file_path: 'x', content: 'y' }) },
          ],
        },
        { text: 'Notes drafted.' },
      ])
      const workspace = memoryWorkspace(FILES)
      const session = await Agent.create({ model }).session(workspace, {
        permissions: { deny: ['read(secret/**)'] },
      })
      const result = await session.governedTool('Skill', {
        skill_name: 'release-notes',
        prompt: 'Draft notes for 1.0',
      })
      expect(result.exitCode).toBe(0)
      expect(result.output).toBe('Notes drafted.')
      expect(result.metadata).toMatchObject({ skill_name: 'release-notes', tool_calls: 2 })
      const sent = fake.requests.filter((r) => r.body.model === modelId)
      expect(sent).toHaveLength(3)
      const body = JSON.stringify(sent[0]!.body)
      expect(body).toContain("You are executing the 'release-notes' skill.")
      expect(body).toContain('Draft notes for 1.0')
      const offered = (
        (sent[0]!.body.tools as { name?: string; function?: { name: string } }[]) ?? []
      )
        .map((t) => t.name ?? t.function?.name)
        .sort()
      expect(offered).toEqual(['bash', 'read'].filter((n) => session.toolNames().includes(n)))
      // The write the model tried is outside the skill: refused, and the file is not there.
      expect(JSON.stringify(sent[2]!.body)).toMatch(/not available here|do not permit/)
      expect(await workspace.stat('x' as never)).toBeUndefined()
    })
  }

  for (const via of ['direct', 'batch', 'program'] as const) {
    it(`a skill allowing * cannot undo a parent deny (${via})`, async () => {
      const modelId = `skill-deny-${via}`
      const model = openAICompatible({ baseURL: fake.baseURL, model: modelId, retryDelayMs: 5 })
      fake.program(modelId, [
        {
          toolCalls: [
            { name: 'write', arguments: JSON.stringify({ file_path: 'w.txt', content: 'y' }) },
          ],
        },
        { text: 'tried' },
      ])
      const workspace = memoryWorkspace(FILES)
      const session = await Agent.create({ model }).session(workspace, {
        permissions: { deny: ['write'] },
      })
      const call = { skill_name: 'lint-fix' }
      const result =
        via === 'direct'
          ? await session.governedTool('Skill', call)
          : via === 'batch'
            ? await session.governedTool('batch', { invocations: [{ tool: 'Skill', args: call }] })
            : await session.governedTool('program', {
                source: `export default async function run(ctx) { return (await ctx.tool('Skill', ${JSON.stringify(call)})).output }`,
              })
      expect(result.exitCode, result.output).toBe(0)
      const second = fake.requests.filter((r) => r.body.model === modelId)[1]!
      expect(JSON.stringify(second.body)).toContain('Error (permission_denied)')
      expect(await workspace.stat('w.txt' as never)).toBeUndefined()
    })
  }
})

describe('skills on local disk', () => {
  let dir = ''
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'isoagent-skills-'))
    const outside = mkdtempSync(join(tmpdir(), 'isoagent-skills-out-'))
    writeFileSync(join(outside, 'evil.md'), skill('name: evil\ndescription: outside the root'))
    mkdirSync(join(dir, '.agents/skills/good'), { recursive: true })
    writeFileSync(join(dir, '.agents/skills/good/SKILL.md'), skill('name: good\ndescription: fine'))
    symlinkSync(join(outside, 'evil.md'), join(dir, '.agents/skills/evil.md'))
    writeFileSync(
      join(dir, '.agents/skills/big.md'),
      skill('name: big\ndescription: x', 'y'.repeat(10 * 1024 * 1024)),
    )
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('skips a symlink out of the root and a 10 MB file, with diagnostics', async () => {
    const session = await Agent.create().session(localWorkspace(dir))
    const report = session.skills()
    expect(report.skills.map((s) => s.name)).toEqual(['good'])
    const paths = report.diagnostics.map((d) => d.path).sort()
    expect(paths).toEqual(['.agents/skills/big.md', '.agents/skills/evil.md'])
    await session.close()
  })
})
