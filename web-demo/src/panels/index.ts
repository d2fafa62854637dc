import type { Panel } from '../context.ts'
import { chatPanel } from './chat.ts'
import { fileViewPanel } from './file-view.ts'
import { gitPanel } from './git.ts'
import { programPanel } from './program.ts'
import { searchPanel } from './search.ts'
import { toolConsolePanel } from './tool-console.ts'

/**
 * The tabs of the main area, in order. The file view comes first and is passed separately too,
 * because other panels open files in it. A new panel is one more entry here.
 */
export function createPanels(): { file: ReturnType<typeof fileViewPanel>; all: Panel[] } {
  const file = fileViewPanel()
  return {
    file,
    all: [file, searchPanel(), gitPanel(), programPanel(), toolConsolePanel(), chatPanel()],
  }
}
