// One skills scenario, run unchanged in Node and in Chromium: skill files written through the
// workspace port, then the registry, search_skills answers and Skill (no model) outputs.
import { Agent, WorkspacePath, type WorkspaceServices } from '../../adapters/index.ts'

const skill = (fm: string, body: string) => `---\n${fm}\n---\n${body}`

/** The skill files of the scenario (folders, flat files, a persona, a broken one). */
export const SCENARIO_FILES: Record<string, string> = {
  '.agents/skills/release-notes/SKILL.md': skill(
    'name: release-notes\ndescription: Draft release notes from the git log.\ntags: [git, docs]\nallowed-tools: Read, Bash(git log:*)',
    'Read CHANGELOG.md, then run git log.\n',
  ),
  '.agents/skills/release-notes/template.md': '# Notes\n',
  '.agents/skills/lint-fix.md': skill(
    'name: lint-fix\ndescription: "Fix lint errors: TypeScript files."\ntags: [lint]',
    'Run the linter.\n',
  ),
  '.claude/skills/reviewer/SKILL.md': skill(
    'name: reviewer\ndescription: A strict code reviewer.\nkind: persona',
    'Review.',
  ),
  '.a3s/skills/deploy.md': skill(
    'name: deploy\ndescription: Deploy the service\nmetadata:\n  owner: ops\nversion: 1.2',
    'Ship it.\n',
  ),
  '.a3s/skills/broken.md': '---\nname: [unclosed\n---\nbody',
}

/** What the scenario saw. */
export interface SkillsScenarioRecord {
  report: unknown
  tools: string[]
  searches: { query: string; exitCode: number; output: string }[]
  loads: { name: string; exitCode: number; output: string }[]
}

export async function runSkillsScenario(
  workspace: WorkspaceServices,
): Promise<SkillsScenarioRecord> {
  const encoder = new TextEncoder()
  for (const [path, text] of Object.entries(SCENARIO_FILES)) {
    const parts = path.split('/')
    for (let i = 1; i < parts.length; i++) {
      const dir = WorkspacePath.parse(parts.slice(0, i).join('/'))
      if ((await workspace.stat(dir)) === undefined) await workspace.mkdir(dir)
    }
    await workspace.write(WorkspacePath.parse(path), encoder.encode(text))
  }
  const session = await Agent.create().session(workspace)
  try {
    const searches = []
    for (const query of ['release notes from git', 'lint', 'deploy service', 'reviewer', ''])
      searches.push({ query, ...(await brief(session.tool('search_skills', { query }))) })
    const loads = []
    for (const name of ['release-notes', 'lint-fix', 'deploy', 'reviewer', 'broken', '../x'])
      loads.push({ name, ...(await brief(session.tool('Skill', { skill_name: name }))) })
    return { report: session.skills(), tools: session.toolNames().sort(), searches, loads }
  } finally {
    await session.close()
  }
}

async function brief(result: Promise<{ exitCode: number; output: string }>) {
  const r = await result
  return { exitCode: r.exitCode, output: r.output }
}
