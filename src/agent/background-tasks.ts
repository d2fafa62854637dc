import { IsoagentError } from '../errors.ts'
import type { ToolResult } from '../tool-result.ts'

/** State of a background task. */
export type BackgroundTaskStatus = 'running' | 'completed' | 'failed' | 'cancelled'

/** A background task as the host sees it: its id, state and, once settled, its result. */
export interface BackgroundTaskInfo {
  id: string
  description: string
  agent: string
  status: BackgroundTaskStatus
  startedAt: number
  endedAt?: number
  /** The task's ToolResult (as a foreground `task` call would have returned it), once settled. */
  result?: ToolResult
}

interface Entry {
  info: BackgroundTaskInfo
  controller: AbortController
  done: Promise<ToolResult>
}

let counter = 0

/**
 * The background tasks of one session (`task` with `background: true`): started by a call that
 * returns their id at once, they run until they settle, are cancelled, or the session closes
 * (which cancels them and waits for them to settle). Settled tasks are kept until the host reads
 * them with {@link BackgroundTasks.wait} or there are more than {@link MAX_KEPT} of them.
 */
export class BackgroundTasks {
  static readonly MAX_KEPT = 64
  private readonly entries = new Map<string, Entry>()
  private closed = false

  /** Start `run`; it gets a signal that aborts on cancel or close. Returns the task's id. */
  start(
    meta: { description: string; agent: string },
    run: (signal: AbortSignal) => Promise<ToolResult>,
  ): string {
    if (this.closed) throw new IsoagentError('cancelled', 'the session is closed')
    counter = (counter + 1) % Number.MAX_SAFE_INTEGER
    const id = `task_${Date.now().toString(36)}_${counter.toString(36)}`
    const controller = new AbortController()
    const info: BackgroundTaskInfo = {
      id,
      description: meta.description,
      agent: meta.agent,
      status: 'running',
      startedAt: Date.now(),
    }
    const done = run(controller.signal).then((result) => {
      info.result = result
      info.endedAt = Date.now()
      info.status =
        result.exitCode === 0
          ? 'completed'
          : result.errorKind?.type === 'cancelled'
            ? 'cancelled'
            : 'failed'
      this.prune()
      return result
    })
    this.entries.set(id, { info, controller, done })
    return id
  }

  list(): BackgroundTaskInfo[] {
    return [...this.entries.values()].map((e) => ({ ...e.info }))
  }

  get(id: string): BackgroundTaskInfo | undefined {
    const e = this.entries.get(id)
    return e && { ...e.info }
  }

  /** The task's result once it settles. Throws `not_found` for an unknown id. */
  async wait(id: string, signal?: AbortSignal): Promise<ToolResult> {
    const entry = this.entries.get(id)
    if (entry === undefined)
      throw new IsoagentError('not_found', `no background task ${JSON.stringify(id)}`)
    if (signal === undefined) return entry.done
    signal.throwIfAborted()
    return new Promise<ToolResult>((resolve, reject) => {
      const onAbort = () => reject(new IsoagentError('cancelled', 'waiting was cancelled'))
      signal.addEventListener('abort', onAbort, { once: true })
      void entry.done.then((r) => {
        signal.removeEventListener('abort', onAbort)
        resolve(r)
      })
    })
  }

  /** Cancel a running task; false when it is unknown or already settled. */
  cancel(id: string): boolean {
    const entry = this.entries.get(id)
    if (entry === undefined || entry.info.status !== 'running') return false
    entry.controller.abort(new IsoagentError('cancelled', 'the background task was cancelled'))
    return true
  }

  /** Cancel every running task and wait until all have settled. */
  async close(): Promise<void> {
    this.closed = true
    for (const e of this.entries.values())
      e.controller.abort(new IsoagentError('cancelled', 'the session is closed'))
    await Promise.allSettled([...this.entries.values()].map((e) => e.done))
  }

  private prune(): void {
    const settled = [...this.entries.values()].filter((e) => e.info.status !== 'running')
    for (const e of settled.slice(0, Math.max(0, settled.length - BackgroundTasks.MAX_KEPT)))
      this.entries.delete(e.info.id)
  }
}
