// Fixtures over browserWorkspace (lightning-fs on IndexedDB). No Node imports: the same module
// runs in Node (on fake-indexeddb, see browser-env.ts) and bundled into a Chromium page.
import { Agent, WorkspacePath, type WorkspaceServices } from '../../adapters/index.ts'
import { browserWorkspace } from '../../adapters/browser/index.ts'
import type { FixtureFactory, SeedFiles } from './fixture.ts'

const encoder = new TextEncoder()
let counter = 0

/** A file-system name no other fixture in this realm uses. */
export function uniqueFsName(prefix = 'isoagent-test'): string {
  const tag = Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) =>
    b.toString(16).padStart(2, '0'),
  ).join('')
  return `${prefix}-${++counter}-${tag}`
}

/** Deletes an IndexedDB database; fails (rather than hangs) when a connection keeps it open. */
export function deleteDatabase(name: string, timeoutMs = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new Error(`deleting IndexedDB database ${name} is blocked by an open connection`)),
      timeoutMs,
    )
    const request = indexedDB.deleteDatabase(name)
    request.onsuccess = () => {
      clearTimeout(timer)
      resolve()
    }
    request.onerror = () => {
      clearTimeout(timer)
      reject(request.error ?? new Error(`deleting IndexedDB database ${name} failed`))
    }
  })
}

/** Removes what lightning-fs keeps for `name`: its files database and its lock database. */
export async function wipeFs(name: string): Promise<void> {
  await deleteDatabase(name)
  await deleteDatabase(`${name}_lock`)
}

/** Every file's bytes by path, read through the port (symlinks recorded by name). */
export async function treeOf(workspace: WorkspaceServices): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>()
  async function visit(dir: WorkspacePath) {
    let after: string | undefined
    for (;;) {
      const page = await workspace.list(dir, { after, limit: 500 })
      for (const entry of page.entries) {
        const child = WorkspacePath.child(dir, entry.name)
        if (entry.kind === 'directory') await visit(child)
        else if (entry.kind === 'file') out.set(child, await workspace.read(child))
        else out.set(`${child}@`, encoder.encode(entry.kind))
      }
      if (page.next === undefined) return
      after = page.next
    }
  }
  await visit(WorkspacePath.root)
  return out
}

/** Writes `files` through the port. */
export async function seed(workspace: WorkspaceServices, files: SeedFiles): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await workspace.write(
      WorkspacePath.parse(path),
      typeof content === 'string' ? encoder.encode(content) : content,
    )
  }
}

/** The tool-conformance fixture: a fresh, uniquely named file system, wiped on cleanup. */
export const browserFixture: FixtureFactory = async (files) => {
  const name = uniqueFsName('isoagent-conf')
  const workspace = browserWorkspace({ name })
  await seed(workspace, files)
  const session = await Agent.create().session(workspace)
  return {
    workspace,
    session,
    tree: () => treeOf(workspace),
    async bytes(path) {
      const p = WorkspacePath.parse(path)
      return (await workspace.stat(p))?.kind === 'file' ? workspace.read(p) : undefined
    },
    async cleanup() {
      await session.close() // closes the workspace: superblock saved, IndexedDB released
      await wipeFs(name)
    },
  }
}

/** The port-conformance factory: an empty, uniquely named file system, wiped on cleanup. */
export async function browserPortWorkspace(): Promise<{
  workspace: WorkspaceServices
  cleanup(): Promise<void>
}> {
  const name = uniqueFsName('isoagent-port')
  const workspace = browserWorkspace({ name })
  return {
    workspace,
    async cleanup() {
      await workspace.close?.()
      await wipeFs(name)
    },
  }
}
