import { foldRun } from './workflow-state.ts'
import type { WorkflowStore } from './workflow-store.ts'

/** What {@link recoverWorkflowStepOutput} looks up. */
export interface RecoverStepOutputQuery {
  runId: string
  /** Must equal the run's `input.query` exactly. */
  query: string
  stepId: string
}

/**
 * The last completed output of step `stepId` of run `runId`, only when the run's `input.query`
 * equals `query` exactly (the same question); undefined otherwise (an unknown run, another
 * query, a step that never completed).
 */
export async function recoverWorkflowStepOutput(
  store: WorkflowStore,
  { runId, query, stepId }: RecoverStepOutputQuery,
): Promise<{ output: unknown } | undefined> {
  const history = await store.history(runId)
  const state = foldRun(runId, history)
  const input = state.input
  if (typeof input !== 'object' || input === null) return undefined
  if ((input as Record<string, unknown>).query !== query) return undefined
  let found: { output: unknown } | undefined
  for (const event of history)
    if (event.type === 'step_completed' && event.step_id === stepId)
      found = { output: event.output }
  return found
}
