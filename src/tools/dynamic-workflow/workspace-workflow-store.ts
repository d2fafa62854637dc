import { IsoagentError } from '../../errors.ts'
import { WorkspacePath } from '../../workspace/workspace-path.ts'
import type { WorkspaceServices } from '../../workspace/workspace-services.ts'
import {
  sequenceEvents,
  type NewWorkflowEvent,
  type WorkflowEvent,
  type WorkflowStore,
} from './workflow-store.ts'

/** Folder of the journals in a workspace (A3S-compatible). */
export const WORKFLOW_DIR = '.a3s/workflow'

const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/

interface Loaded {
  events: WorkflowEvent[]
  /** The bytes of the whole lines (a torn last line left out). */
  text: string
  version: string | undefined
}

/** Parse JSON lines; a last line without its newline (torn by a crash) is ignored. */
export function parseJournal(text: string): { events: WorkflowEvent[]; text: string } {
  const end = text.lastIndexOf('\n') + 1
  const whole = text.slice(0, end)
  const events: WorkflowEvent[] = []
  for (const line of whole.split('\n')) {
    if (line.trim() === '') continue
    events.push(JSON.parse(line) as WorkflowEvent)
  }
  return { events, text: whole }
}

function pathOf(runId: string): WorkspacePath {
  if (!RUN_ID.test(runId))
    throw new IsoagentError('invalid_argument', `run id must match [A-Za-z0-9_-]+: ${runId}`)
  return WorkspacePath.parse(`${WORKFLOW_DIR}/${runId}.jsonl`)
}

/** Refuse a store path with a symlink on it, where the workspace's listings tell. */
async function refuseSymlinks(workspace: WorkspaceServices, path: WorkspacePath): Promise<void> {
  let at = path
  while (at !== WorkspacePath.root) {
    const parent = WorkspacePath.parent(at)
    const name = WorkspacePath.basename(at)
    let kind: string | undefined
    try {
      const page = await workspace.list(parent, { after: name.slice(0, -1) + '', limit: 1000 })
      kind = page.entries.find((e) => e.name === name)?.kind
    } catch (cause) {
      if (IsoagentError.is(cause) && cause.code === 'not_found') kind = undefined
      else throw cause
    }
    if (kind === 'symlink')
      throw new IsoagentError('permission_denied', `workflow store path ${at} is a symlink`)
    at = parent
  }
}

/**
 * A {@link WorkflowStore} of JSON-lines files `.a3s/workflow/<run_id>.jsonl` in a workspace, one
 * event a line. Each append reads the journal and writes it back whole under a precondition
 * (`ifVersion` of what it read, `ifAbsent` for a new run), so any workspace with conditional
 * writes holds it (local disk, S3, R2, memory). Every write is `durable`: on the local disk the
 * complete journal goes to a temp file that is fsync'd, renamed over the old one, and the folder
 * fsync'd before the append resolves, so a crash leaves the old journal or the new one, and a
 * step counts as completed only once its event is on stable storage. A torn last line is ignored
 * (and dropped by the next append); a symlink on the store path is refused where the workspace
 * lists symlinks.
 */
export function workspaceWorkflowStore(workspace: WorkspaceServices): WorkflowStore {
  const encoder = new TextEncoder()
  const decoder = new TextDecoder()
  // Runs whose store path was found free of symlinks (the adapters contain each open anyway).
  const checked = new Set<string>()

  async function load(runId: string): Promise<Loaded> {
    const path = pathOf(runId)
    if (!checked.has(runId)) {
      await refuseSymlinks(workspace, path)
      checked.add(runId)
    }
    const stat = await workspace.stat(path)
    if (stat === undefined) return { events: [], text: '', version: undefined }
    if (stat.kind !== 'file')
      throw new IsoagentError('invalid_argument', `workflow journal ${path} is not a file`)
    const bytes = await workspace.read(path)
    const after = await workspace.stat(path)
    const version = after?.version === stat.version ? stat.version : undefined
    const parsed = parseJournal(decoder.decode(bytes))
    // A changed version between stat and read: let the conditional write fail and the caller retry.
    return { ...parsed, version: version ?? '\u0000changed' }
  }

  return {
    async append(runId, afterSequence, events: readonly NewWorkflowEvent[]) {
      const path = pathOf(runId)
      const loaded = await load(runId)
      const stored = sequenceEvents(runId, loaded.events, afterSequence, events)
      const text = loaded.text + stored.map((e) => JSON.stringify(e) + '\n').join('')
      await workspace.write(path, encoder.encode(text), {
        durable: true,
        precondition:
          loaded.version === undefined ? { ifAbsent: true } : { ifVersion: loaded.version },
      })
      return stored
    },
    async history(runId) {
      return (await load(runId)).events
    },
    async list() {
      const dir = WorkspacePath.parse(WORKFLOW_DIR)
      const ids: string[] = []
      let after: string | undefined
      try {
        for (;;) {
          const page = await workspace.list(dir, after === undefined ? {} : { after })
          for (const e of page.entries)
            if (e.kind === 'file' && e.name.endsWith('.jsonl')) ids.push(e.name.slice(0, -6))
          if (page.next === undefined) break
          after = page.next
        }
      } catch (cause) {
        if (IsoagentError.is(cause) && cause.code === 'not_found') return []
        throw cause
      }
      return ids
    },
  }
}
