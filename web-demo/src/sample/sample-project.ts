// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- the virtual module is typed for every program that compiles this file (tests too), not only web-demo/tsconfig.json
/// <reference path="./virtual-sample-project.d.ts" />
import { WorkspacePath, type WorkspaceServices } from '../../../adapters/browser/index.ts'

/** A file of the sample project: its workspace path and its bytes. */
export interface SampleFile {
  path: string
  bytes: Uint8Array
}

/**
 * The sample project `npm start` serves (examples/sample-project) with its `.git` (one commit,
 * "sample project", on `main`), loaded on demand: it is bundled at build time as the virtual
 * module `virtual:sample-project`.
 */
export async function sampleFiles(): Promise<SampleFile[]> {
  const { default: files } = await import('virtual:sample-project')
  return files.map((f) => ({
    path: f.path,
    bytes: Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0)),
  }))
}

/** Whether the workspace root has no entry at all (a first visit). */
export async function isEmptyWorkspace(workspace: WorkspaceServices): Promise<boolean> {
  const page = await workspace.list(WorkspacePath.parse(''), { limit: 1 })
  return page.entries.length === 0
}

/** Write the sample's files (and `.git`) into the workspace; returns how many were written. */
export async function writeSample(workspace: WorkspaceServices): Promise<number> {
  const files = await sampleFiles()
  for (const file of files) await workspace.write(WorkspacePath.parse(file.path), file.bytes)
  return files.length
}

/** Remove every entry of the workspace root (`.git` too), page after page. */
export async function clearWorkspace(workspace: WorkspaceServices): Promise<void> {
  const root = WorkspacePath.parse('')
  for (;;) {
    const page = await workspace.list(root)
    if (page.entries.length === 0) return
    for (const entry of page.entries)
      await workspace.remove(WorkspacePath.parse(entry.name), {
        recursive: entry.kind === 'directory',
      })
  }
}
