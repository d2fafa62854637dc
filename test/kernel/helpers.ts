import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import {
  Agent,
  memoryWorkspace,
  WorkspacePath,
  type Session,
  type SessionEvent,
  type SessionOptions,
  type WorkspaceServices,
} from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'

/** The workspaces every kernel test runs on. */
export const WORKSPACE_KINDS = ['memory', 'local'] as const
export type WorkspaceKind = (typeof WORKSPACE_KINDS)[number]

export interface Harness {
  session: Session
  workspace: WorkspaceServices
  /** Current text of a file, read around the tools (undefined when absent). */
  file(path: string): Promise<string | undefined>
  cleanup(): Promise<void>
}

const cleanups: (() => Promise<void>)[] = []

/** A session over a fresh workspace of `kind` seeded with `files`. */
export async function harness(
  kind: WorkspaceKind,
  files: Record<string, string> = {},
  options: SessionOptions = {},
): Promise<Harness> {
  let workspace: WorkspaceServices
  let remove = async () => {}
  if (kind === 'memory') workspace = memoryWorkspace(files)
  else {
    const root = mkdtempSync(join(tmpdir(), 'isoagent-kernel-'))
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true })
      writeFileSync(join(root, path), content)
    }
    workspace = localWorkspace(root)
    remove = async () => rmSync(root, { recursive: true, force: true })
  }
  const session = await Agent.create().session(workspace, options)
  const h: Harness = {
    session,
    workspace,
    async file(path) {
      if (kind === 'local') {
        try {
          return readFileSync(join(workspace.capabilities.localRoot!, path), 'utf8')
        } catch {
          return undefined
        }
      }
      const p = WorkspacePath.parse(path)
      return (await workspace.stat(p)) === undefined
        ? undefined
        : new TextDecoder().decode(await workspace.read(p))
    },
    async cleanup() {
      await session.close()
      await remove()
    },
  }
  cleanups.push(h.cleanup)
  return h
}

/** Close every harness made so far (call from afterEach). */
export async function cleanupHarnesses(): Promise<void> {
  while (cleanups.length > 0) await cleanups.pop()!()
}

/** Collect events into an array while a test runs. */
export function recordEvents(session: Session): { events: SessionEvent[]; stop(): void } {
  const controller = new AbortController()
  const events: SessionEvent[] = []
  void (async () => {
    for await (const event of session.events({ signal: controller.signal })) events.push(event)
  })()
  return { events, stop: () => controller.abort() }
}

/** Resolve after the event loop has run pending callbacks a few times. */
export async function settle(times = 5): Promise<void> {
  for (let i = 0; i < times; i++) await new Promise((r) => setTimeout(r, 0))
}

/** Wait until `predicate` holds (polling), or fail after `ms`. */
export async function until(predicate: () => boolean, ms = 2000): Promise<void> {
  const start = Date.now()
  while (!predicate()) {
    if (Date.now() - start > ms) throw new Error('condition not reached in time')
    await new Promise((r) => setTimeout(r, 5))
  }
}
