import type { SkillsReport } from '../../../adapters/browser/index.ts'
import { resultView, type DemoContext, type Panel } from '../context.ts'
import { field, h, replace } from '../dom.ts'
import { block, capabilityLayout, note, say } from './capability-layout.ts'
import { sessionState } from './session-state.ts'

/** The example skill the empty state offers to write. */
export const EXAMPLE_SKILL_PATH = '.agents/skills/release-notes/SKILL.md'
const EXAMPLE_SKILL = `---
name: release-notes
description: Write release notes from the git log since the last tag. Use when preparing a release.
allowed-tools: git read search
tags: [git, docs]
---

1. Run \`git log\` since the last tag.
2. Group the commits as Added, Changed, Fixed.
3. Write them to RELEASE_NOTES.md, newest first.
`

type SkillRow = SkillsReport['skills'][number]

/** One skill of the list: name, kind, description, where it comes from, and "Open". */
function skillRow(skill: SkillRow, open: (name: string) => void): HTMLElement {
  const where = 'path' in skill.source ? skill.source.path : skill.source.kind
  return h(
    'li',
    { class: 'skill', 'data-skill': skill.name },
    h('strong', {}, skill.name),
    ` (${skill.kind}) `,
    h('button', { type: 'button', class: 'skill-open', onclick: () => open(skill.name) }, 'Open'),
    h('div', {}, skill.description),
    h(
      'small',
      {},
      `${where} · allowed tools: ${skill.allowed_tools?.join(', ') ?? 'none (not specified)'}` +
        (skill.tags.length ? ` · tags: ${skill.tags.join(', ')}` : ''),
    ),
  )
}

/**
 * The skills panel: the session's skills (found in `.agents/skills`, `.claude/skills`,
 * `.a3s/skills` when the session opened), `search_skills`, and opening one through the `Skill`
 * tool (without a model it returns the instructions and the bundled files).
 */
export function skillsPanel(): Panel {
  return {
    id: 'skills',
    title: 'Skills',
    render(ctx: DemoContext) {
      const listHost = h('div', { id: 'skills-list' }, 'Reading the skills…')
      const query = h('input', { id: 'skills-query', type: 'search', placeholder: 'e.g. release' })
      const out = h('div', { id: 'skills-result', 'aria-live': 'polite' })
      const { el, status } = capabilityLayout({
        id: 'skills',
        title: 'Skills',
        intro:
          'Skills are folders with a SKILL.md (YAML front matter + instructions) in the ' +
          'workspace, found when the session opens. The model finds them with search_skills and ' +
          'runs one with Skill, under the session’s rules (a skill can only narrow its tools).',
        body: [
          block('Skills of this session', listHost),
          block(
            'Search and open',
            field('search_skills query', query),
            h(
              'button',
              { type: 'button', id: 'skills-search', onclick: () => void search() },
              'Search',
            ),
            out,
          ),
        ],
      })
      const open = async (name: string) => {
        replace(out, note('info', `Opening ${name} with the Skill tool…`))
        replace(out, resultView(await ctx.client.call('Skill', { skill_name: name })))
      }
      const search = async () => {
        if (!ctx.has('search_skills'))
          return replace(out, note('missing', 'search_skills is offered only when a skill exists.'))
        const result = await ctx.client.call('search_skills', { query: query.value || 'skill' })
        replace(out, resultView(result))
      }
      const addExample = async () => {
        const result = await ctx.client.call('write', {
          file_path: EXAMPLE_SKILL_PATH,
          content: EXAMPLE_SKILL,
        })
        ctx.refreshTree()
        say(
          status,
          result.exitCode === 0
            ? note(
                'hint',
                `Wrote ${EXAMPLE_SKILL_PATH}. Skills load when a session opens: `,
                h(
                  'button',
                  { type: 'button', id: 'skills-reload', onclick: () => location.reload() },
                  'Reload',
                ),
              )
            : resultView(result),
        )
      }
      void sessionState(ctx.client)
        .skills()
        .then((answer) => {
          if (!answer.ok)
            return replace(
              listHost,
              note('missing', `No skills: ${answer.code}: ${answer.message}`),
            )
          const { skills, diagnostics } = answer.value
          replace(
            listHost,
            skills.length
              ? h(
                  'ul',
                  { class: 'skill-list' },
                  ...skills.map((s) => skillRow(s, (n) => void open(n))),
                )
              : note(
                  'hint',
                  'No skill in this workspace yet. Add a folder with a SKILL.md under ' +
                    '.agents/skills/<name>/, or ',
                  h(
                    'button',
                    { type: 'button', id: 'skills-example', onclick: () => void addExample() },
                    'write an example skill',
                  ),
                ),
            diagnostics.length
              ? h(
                  'ul',
                  { class: 'skill-diagnostics' },
                  ...diagnostics.map((d) => h('li', {}, `skipped ${d.path}: ${d.message}`)),
                )
              : null,
          )
        })
      return el
    },
  }
}
