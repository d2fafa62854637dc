import type { BackgroundTasks } from '../../agent/background-tasks.ts'
import type { ToolSpec } from '../../kernel/tool-spec.ts'
import type { LanguageModel } from '../../llm/language-model.ts'

/** What the `task` tool needs from its session. */
export interface TaskHost {
  model: LanguageModel
  /** The session's listed tools (set once its kernel exists). */
  tools(): readonly ToolSpec<Record<string, unknown>>[]
  background: BackgroundTasks
}
