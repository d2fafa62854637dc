import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  lstatSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import {
  Agent,
  memoryWorkspace,
  WorkspacePath,
  type Session,
  type WorkspaceServices,
} from '../../adapters/index.ts'
import { localWorkspace, type LocalWorkspaceOptions } from '../../adapters/node/index.ts'

/** Files to seed a workspace with: text or bytes by relative path. */
export type SeedFiles = Record<string, string | Uint8Array>

/**
 * A workspace under test plus ways to look at it that bypass the tools, so the suite can prove
 * what changed and what did not.
 */
export interface WorkspaceFixture {
  workspace: WorkspaceServices
  session: Session
  /** Every file's bytes, by path, read without the tools. */
  tree(): Promise<Map<string, Uint8Array>>
  /** One file's bytes read without the tools, or undefined. */
  bytes(path: string): Promise<Uint8Array | undefined>
  /** Local disk only: make a symlink at `path` (workspace-relative) pointing at `target`. */
  symlink?(path: string, target: string): void
  /** Local disk only: a file outside the root that escapes must never touch. */
  outsideFile?: string
  cleanup(): Promise<void>
}

/** Creates a fresh fixture seeded with `files`. */
export type FixtureFactory = (files: SeedFiles) => Promise<WorkspaceFixture>

const encoder = new TextEncoder()
const asBytes = (content: string | Uint8Array) =>
  typeof content === 'string' ? encoder.encode(content) : content

async function walk(
  workspace: WorkspaceServices,
  dir: WorkspacePath,
  out: Map<string, Uint8Array>,
) {
  let after: string | undefined
  for (;;) {
    const page = await workspace.list(dir, { after, limit: 500 })
    for (const entry of page.entries) {
      const child = WorkspacePath.child(dir, entry.name)
      if (entry.kind === 'directory') await walk(workspace, child, out)
      else if (entry.kind === 'file') out.set(child, await workspace.read(child))
    }
    if (page.next === undefined) return
    after = page.next
  }
}

export const memoryFixture: FixtureFactory = async (files) => {
  const workspace = memoryWorkspace(files)
  const session = await Agent.create().session(workspace)
  return {
    workspace,
    session,
    async tree() {
      const out = new Map<string, Uint8Array>()
      await walk(workspace, WorkspacePath.root, out)
      return out
    },
    async bytes(path) {
      const p = WorkspacePath.parse(path)
      return (await workspace.stat(p))?.kind === 'file' ? workspace.read(p) : undefined
    },
    async cleanup() {
      await session.close()
    },
  }
}

function diskTree(root: string, rel = '', out = new Map<string, Uint8Array>()) {
  for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
    const path = rel === '' ? entry.name : `${rel}/${entry.name}`
    if (entry.isDirectory()) diskTree(root, path, out)
    else if (entry.isFile()) out.set(path, new Uint8Array(readFileSync(join(root, path))))
    else if (entry.isSymbolicLink()) out.set(`${path}@`, encoder.encode('symlink'))
  }
  return out
}

export const localFixture: FixtureFactory = (files) => localDiskFixture(files, {})

/** The local workspace with thread-pool (asynchronous) system calls only. */
export const localAsyncFixture: FixtureFactory = (files) =>
  localDiskFixture(files, { syncMetadata: false })

async function localDiskFixture(
  files: SeedFiles,
  options: LocalWorkspaceOptions,
): Promise<WorkspaceFixture> {
  const base = mkdtempSync(join(tmpdir(), 'isoagent-conf-'))
  const root = join(base, 'root')
  mkdirSync(root)
  const outsideFile = join(base, 'outside.txt')
  writeFileSync(outsideFile, 'outside the workspace\n')
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), asBytes(content))
  }
  const workspace = localWorkspace(root, options)
  const session = await Agent.create().session(workspace)
  return {
    workspace,
    session,
    async tree() {
      const out = diskTree(root)
      out.set('<outside>', new Uint8Array(readFileSync(outsideFile)))
      return out
    },
    async bytes(path) {
      try {
        if (!lstatSync(join(root, path)).isFile()) return undefined
        return new Uint8Array(readFileSync(join(root, path)))
      } catch {
        return undefined
      }
    },
    symlink(path, target) {
      mkdirSync(dirname(join(root, path)), { recursive: true })
      symlinkSync(target, join(root, path))
    },
    outsideFile,
    async cleanup() {
      await session.close()
      rmSync(base, { recursive: true, force: true })
    },
  }
}
