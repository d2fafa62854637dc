import type { Panel } from '../context.ts'
import { chatPanel } from './chat.ts'
import { comparePanel } from './compare.ts'
import { fileViewPanel } from './file-view.ts'
import { gitPanel } from './git.ts'
import { governancePanel } from './governance.ts'
import { mcpPanel } from './mcp.ts'
import { programPanel } from './program.ts'
import { retrievalPanel } from './retrieval.ts'
import { searchPanel } from './search.ts'
import { skillsPanel } from './skills.ts'
import { toolConsolePanel } from './tool-console.ts'
import { workflowsPanel } from './workflows.ts'

/**
 * The tabs of the main area, in order. The file view comes first and is passed separately too,
 * because other panels open files in it. A new panel is one more entry here.
 */
export function createPanels(): { file: ReturnType<typeof fileViewPanel>; all: Panel[] } {
  const file = fileViewPanel()
  return {
    file,
    all: [
      file,
      searchPanel(),
      gitPanel(),
      programPanel(),
      toolConsolePanel(),
      chatPanel(),
      // What is special about isoagent: one layout (capability-layout.ts) for all of these.
      governancePanel(),
      comparePanel(),
      skillsPanel(),
      retrievalPanel(),
      mcpPanel(),
      workflowsPanel(),
    ],
  }
}
