// The page side of chromium.test.ts: the skills scenario over a browser workspace (IndexedDB).
import { browserWorkspace } from '../../adapters/browser/index.ts'
import { runSkillsScenario } from './skills-scenario.ts'

;(globalThis as unknown as { isoagentPage: unknown }).isoagentPage = {
  skills: () => runSkillsScenario(browserWorkspace({ name: `skills-${Date.now()}` })),
}
