import { IsoagentError } from '../errors.ts'
import type { ToolResult } from '../tool-result.ts'
import type { WorkflowHost } from '../tools/dynamic-workflow/dynamic-workflow.ts'
import { foldRun, type WorkflowStatus } from '../tools/dynamic-workflow/workflow-state.ts'
import type { WorkflowEvent } from '../tools/dynamic-workflow/workflow-store.ts'

/** A digest-only summary of a run (no inputs or outputs). */
export interface WorkflowInspection {
  run_id: string
  /** `unknown` when the store holds no such run. */
  status: WorkflowStatus | 'unknown'
  /** Whether this session is driving the run now. */
  running: boolean
  last_sequence: number
  source_hash: string | undefined
  steps: { total: number; pending: number; completed: number; failed: number }
}

/** Control of one run (`session.workflow(runId)`). */
export interface WorkflowHandle {
  inspect(): Promise<WorkflowInspection>
  /** The run's journal. */
  history(): Promise<WorkflowEvent[]>
  /**
   * Cancel the run: a run this session drives is stopped (its running steps settle, then
   * `run_cancelled` is journaled); an idle, unfinished run gets `run_cancelled` at once. False
   * when the run is unknown or has ended.
   */
  cancel(reason?: string): Promise<boolean>
  /** Resume the run with its journaled source and input (a host-direct `dynamic_workflow` call). */
  drive(options?: { signal?: AbortSignal }): Promise<ToolResult>
}

/** The handle of run `runId` over `host`; `call` runs `dynamic_workflow` host-direct. */
export function workflowHandle(
  runId: string,
  host: WorkflowHost,
  call: (args: Record<string, unknown>, signal: AbortSignal | undefined) => Promise<ToolResult>,
): WorkflowHandle {
  return {
    async inspect() {
      const history = await host.store.history(runId)
      const state = foldRun(runId, history)
      const steps = [...state.steps.values()]
      const count = (status: string) => steps.filter((s) => s.status === status).length
      return {
        run_id: runId,
        status: history.length === 0 ? 'unknown' : state.status,
        running: host.live.has(runId),
        last_sequence: state.lastSequence,
        source_hash: state.sourceHash,
        steps: {
          total: steps.length,
          pending: count('pending'),
          completed: count('completed'),
          failed: count('failed'),
        },
      }
    },
    history: () => host.store.history(runId),
    async cancel(reason = 'cancelled by the host') {
      const live = host.live.get(runId)
      if (live !== undefined) {
        live.abort(reason)
        return true
      }
      const history = await host.store.history(runId)
      const state = foldRun(runId, history)
      if (history.length === 0 || state.terminal !== undefined) return false
      await host.store.append(runId, state.lastSequence, [{ type: 'run_cancelled', reason }])
      return true
    },
    async drive(options = {}) {
      const created = (await host.store.history(runId)).find((e) => e.type === 'run_created')
      if (created?.type !== 'run_created' || created.source === undefined)
        throw new IsoagentError('not_found', `no workflow run ${runId} with a journaled source`)
      return call({ source: created.source, input: created.input, run_id: runId }, options.signal)
    },
  }
}
