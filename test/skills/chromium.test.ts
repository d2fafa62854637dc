// Skills in Chromium over IndexedDB: the same skill files written into a browser workspace give
// the same registry, search_skills answers and Skill outputs as in Node over a memory workspace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryWorkspace } from '../../adapters/index.ts'
import { openChromiumPage, type ChromiumPage } from '../mcp-client/chromium-harness.ts'
import { runSkillsScenario, type SkillsScenarioRecord } from './skills-scenario.ts'

let page: ChromiumPage
beforeAll(async () => {
  page = await openChromiumPage('test/skills/chromium-page.ts')
}, 120_000)
afterAll(() => page?.close())

describe('skills in Chromium (IndexedDB)', () => {
  it('the same registry, search_skills answers and Skill outputs as in Node', async () => {
    const inPage = await page.call<SkillsScenarioRecord>('skills')
    const inNode = await runSkillsScenario(memoryWorkspace({}))
    expect(page.errors).toEqual([])
    expect(inPage.tools).toEqual(expect.arrayContaining(['search_skills', 'Skill']))
    expect(inPage.searches[0]!.output).toContain('- release-notes (instruction)')
    expect(inPage.loads[0]!.output).toContain('.agents/skills/release-notes/template.md')
    expect(inPage.loads.find((l) => l.name === 'deploy')!.output).toContain('Ship it.')
    expect(inPage.loads.find((l) => l.name === '../x')).toMatchObject({ exitCode: 1 })
    expect(JSON.stringify(inPage.report)).toContain('.a3s/skills/broken.md')
    expect(inPage).toEqual(inNode)
  }, 60_000)
})
