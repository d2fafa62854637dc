import type { WorkflowStepEvent } from '../../kernel/events.ts'
import type { WorkflowEvent } from './workflow-store.ts'

/** The session event a journal event becomes (steps only; run events stay in the journal). */
export function workflowStepEvent(
  runId: string,
  event: WorkflowEvent,
): WorkflowStepEvent | undefined {
  const timestamp = Date.now()
  switch (event.type) {
    case 'step_started':
    case 'step_completed':
      return {
        type: `workflow_${event.type}`,
        run_id: runId,
        step_id: event.step_id,
        attempt: event.attempt,
        timestamp,
      }
    case 'step_failed':
      return {
        type: 'workflow_step_failed',
        run_id: runId,
        step_id: event.step_id,
        attempt: event.attempt,
        error: event.error,
        timestamp,
      }
    default:
      return undefined
  }
}
