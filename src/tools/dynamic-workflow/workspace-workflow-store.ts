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

/** A run's journal as this store last read or wrote it. */
interface Loaded {
  events: WorkflowEvent[]
  /** The whole lines (a torn last line left out). */
  text: string
  /** The file's version; undefined when there is no journal yet. */
  version: string | undefined
  /** The file ends in a torn line (left by a crash) that the next append must drop. */
  torn: boolean
}

/** Runs whose journal a store keeps in memory between appends (the least recent go first). */
const CACHED_RUNS = 32

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
 * event a line, under a precondition on every write (`ifVersion` of the journal as last read or
 * written, `ifAbsent` for a new run), so any workspace with conditional writes holds it (local
 * disk, S3, R2, memory), and two drivers of a run cannot interleave.
 *
 * An append of one event is an appending write where the workspace has one (the local disk:
 * the line is written at the end of the file and fsync'd before the append resolves, so a step
 * counts as completed only once its event is on stable storage; a `step_started` line is not
 * fsync'd on its own but with the line after it, so a power loss, not a process crash, may lose
 * the start of a step that then has not completed either). Everything else is written
 * whole and `durable` (on the local disk: a temp file fsync'd, renamed, its folder fsync'd):
 * the creation of a journal, an append of several events (all or none), every append where the
 * workspace has no appending write (S3, R2, memory), and the first append after a crash, which
 * drops a torn last line. A torn last line is ignored on reading: a crash in the middle of an
 * append loses that append and nothing before it. The store keeps the journals it last wrote in
 * memory and reads a file again only when its version changed. A symlink on the store path is
 * refused where the workspace lists symlinks.
 */
export function workspaceWorkflowStore(workspace: WorkspaceServices): WorkflowStore {
  const encoder = new TextEncoder()
  const decoder = new TextDecoder()
  // Runs whose store path was found free of symlinks (the adapters contain each open anyway).
  const checked = new Set<string>()
  const cache = new Map<string, Loaded>()

  const remember = (runId: string, loaded: Loaded) => {
    cache.delete(runId)
    cache.set(runId, loaded)
    if (cache.size > CACHED_RUNS) cache.delete(cache.keys().next().value!)
  }

  async function read(runId: string): Promise<Loaded> {
    const path = pathOf(runId)
    if (!checked.has(runId)) {
      await refuseSymlinks(workspace, path)
      checked.add(runId)
    }
    const stat = await workspace.stat(path)
    if (stat === undefined) return { events: [], text: '', version: undefined, torn: false }
    if (stat.kind !== 'file')
      throw new IsoagentError('invalid_argument', `workflow journal ${path} is not a file`)
    const known = cache.get(runId)
    if (known !== undefined && known.version === stat.version) return known
    const bytes = await workspace.read(path)
    const after = await workspace.stat(path)
    const all = decoder.decode(bytes)
    const parsed = parseJournal(all)
    // Changed between stat and read: let the conditional write fail and the caller retry.
    const version = after?.version === stat.version ? stat.version : '\u0000changed'
    const loaded = { ...parsed, version, torn: parsed.text.length < all.length }
    if (after?.version === stat.version) remember(runId, loaded)
    return loaded
  }

  /** Write `stored` after `base`; the journal as it now is. */
  async function put(runId: string, base: Loaded, stored: WorkflowEvent[]): Promise<Loaded> {
    const path = pathOf(runId)
    const lines = stored.map((e) => JSON.stringify(e) + '\n').join('')
    const precondition =
      base.version === undefined ? { ifAbsent: true } : { ifVersion: base.version }
    const appending =
      workspace.append !== undefined &&
      base.version !== undefined &&
      !base.torn &&
      stored.length === 1
    // A step_started line is flushed with the next line (a completion, a failure): only that
    // one must be on stable storage before the append resolves.
    const durable = !(stored.length === 1 && stored[0]!.type === 'step_started')
    const outcome = appending
      ? await workspace.append!(path, encoder.encode(lines), { durable, precondition })
      : await workspace.write(path, encoder.encode(base.text + lines), {
          durable: true,
          precondition,
        })
    return {
      events: [...base.events, ...stored],
      text: base.text + lines,
      version: outcome.version,
      torn: false,
    }
  }

  async function appendAfter(
    runId: string,
    base: Loaded,
    afterSequence: number,
    events: readonly NewWorkflowEvent[],
  ): Promise<WorkflowEvent[]> {
    const stored = sequenceEvents(runId, base.events, afterSequence, events)
    remember(runId, await put(runId, base, stored))
    return stored
  }

  return {
    async append(runId, afterSequence, events: readonly NewWorkflowEvent[]) {
      const known = cache.get(runId)
      try {
        return await appendAfter(runId, known ?? (await read(runId)), afterSequence, events)
      } catch (error) {
        cache.delete(runId)
        // The journal held in memory was stale (another writer appended): read it, once more.
        if (known === undefined || !(IsoagentError.is(error) && error.code === 'version_conflict'))
          throw error
      }
      try {
        return await appendAfter(runId, await read(runId), afterSequence, events)
      } catch (error) {
        cache.delete(runId)
        throw error
      }
    },
    async history(runId) {
      return structuredClone((await read(runId)).events)
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
