// Repositories built with the real git CLI (fixed identities and dates, so object ids are
// deterministic), and the workspaces the git cases run against: local disk through the CLI and
// through isomorphic-git, memory, and the browser adapter on fake-indexeddb.
import { execFileSync } from 'node:child_process'
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import {
  Agent,
  WorkspacePath,
  memoryWorkspace,
  type Session,
  type WorkspaceServices,
} from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'

/** The committer of every fixture commit (and the session author of the tool's commits). */
export const AUTHOR = { name: 'Ada Lovelace', email: 'ada@example.com' }

let clock = 1_700_000_000

/** Environment for the oracle git: no user config, fixed identity and an advancing clock. */
export function gitEnv(): NodeJS.ProcessEnv {
  const date = `@${clock} +0200`
  return {
    PATH: process.env.PATH,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: AUTHOR.name,
    GIT_AUTHOR_EMAIL: AUTHOR.email,
    GIT_COMMITTER_NAME: AUTHOR.name,
    GIT_COMMITTER_EMAIL: AUTHOR.email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
    LC_ALL: 'C',
    TZ: 'UTC',
  }
}

/** Run the oracle git in `dir`; returns stdout. */
export function git(dir: string, ...args: string[]): string {
  clock += 60
  return execFileSync('git', ['-c', 'core.quotepath=off', ...args], {
    cwd: dir,
    env: gitEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** Run the oracle git, expecting failure; returns its exit code. */
export function gitFails(dir: string, ...args: string[]): number {
  try {
    git(dir, ...args)
    return 0
  } catch (error) {
    return (error as { status?: number }).status ?? 1
  }
}

export function write(dir: string, path: string, content: string | Uint8Array): void {
  mkdirSync(dirname(join(dir, path)), { recursive: true })
  writeFileSync(join(dir, path), content)
}

const temps: string[] = []

export function tempDir(prefix = 'isoagent-git-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  temps.push(dir)
  return dir
}

export function removeTemps(): void {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/** Lines `1`..`n` of a source-like file: `name` lines start with a letter (function context). */
function source(name: string, n: number, change?: { at: number; text: string }): string {
  const lines: string[] = []
  for (let i = 1; i <= n; i++) {
    if (i % 10 === 1) lines.push(`function ${name}${i}() {`)
    else lines.push(`  step(${i})`)
    if (change !== undefined && change.at === i) lines.push(change.text)
  }
  return `${lines.join('\n')}\n`
}

/**
 * The standard repository: 15 commits on `main` (files in directories, a binary file, a
 * tag), a `feature` branch that changes `src/app.js` and adds `feature.txt`, and an `origin`
 * remote (configuration only; nothing is fetched).
 */
export function standardRepo(): string {
  const dir = tempDir()
  git(dir, 'init', '-q', '--initial-branch=main')
  write(dir, 'README.md', '# demo\n')
  write(dir, 'src/app.js', source('app', 40))
  write(dir, 'src/util.js', source('util', 12))
  write(dir, 'docs/guide.txt', 'guide\n')
  write(dir, 'logo.bin', new Uint8Array([0, 1, 2, 3, 255, 0, 7]))
  write(dir, '.gitignore', 'build/\n')
  git(dir, 'add', '-A')
  git(dir, 'commit', '-q', '-m', 'Initial commit')
  for (let i = 2; i <= 15; i++) {
    write(dir, 'CHANGES.txt', Array.from({ length: i }, (_, k) => `change ${k + 1}\n`).join(''))
    git(dir, 'add', '-A')
    git(dir, 'commit', '-q', '-m', `Change ${i}\n\nBody of change ${i}.\nSecond line.`)
  }
  git(dir, 'tag', 'v1.0')
  git(dir, 'checkout', '-q', '-b', 'feature')
  write(dir, 'src/app.js', source('app', 40, { at: 25, text: '  featureStep()' }))
  write(dir, 'feature.txt', 'feature\n')
  git(dir, 'add', '-A')
  git(dir, 'commit', '-q', '-m', 'Feature work')
  git(dir, 'checkout', '-q', 'main')
  git(dir, 'remote', 'add', 'origin', 'https://git.example.invalid/demo.git')
  return dir
}

/** A copy of `dir` in a new temp directory. */
export function copyOf(dir: string): string {
  const copy = tempDir()
  cpSync(dir, copy, { recursive: true })
  return copy
}

/** Every file under `dir` (relative path → bytes). */
export function filesOf(dir: string, rel = '', out: Record<string, Uint8Array> = {}) {
  for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const path = rel === '' ? entry.name : `${rel}/${entry.name}`
    if (entry.isDirectory()) filesOf(dir, path, out)
    else if (entry.isFile()) out[path] = new Uint8Array(readFileSync(join(dir, path)))
  }
  return out
}

/** A workspace under test holding a repository. */
export interface GitTargetHandle {
  workspace: WorkspaceServices
  session: Session
  /** A directory on disk with the workspace's current files, for the oracle git to inspect. */
  materialize(): Promise<string>
  close(): Promise<void>
}

/** One kind of workspace the git cases run against. */
export interface GitTarget {
  name: string
  /** `cli` or `isomorphic-git`: the backend the tool must report. */
  backend: 'cli' | 'isomorphic-git'
  /** Has a local root (worktree paths are real). */
  local: boolean
  /** Opens a workspace holding a copy of the repository (or files) in `dir`. */
  open(dir: string): Promise<GitTargetHandle>
}

async function dump(workspace: WorkspaceServices): Promise<string> {
  const out = tempDir('isoagent-git-dump-')
  async function visit(dir: WorkspacePath) {
    let after: string | undefined
    for (;;) {
      const page = await workspace.list(dir, { after, limit: 500 })
      for (const entry of page.entries) {
        const child = WorkspacePath.child(dir, entry.name)
        if (entry.kind === 'directory') {
          mkdirSync(join(out, child), { recursive: true })
          await visit(child)
        } else if (entry.kind === 'file') write(out, child, await workspace.read(child))
      }
      if (page.next === undefined) return
      after = page.next
    }
  }
  await visit(WorkspacePath.root)
  return out
}

function localTarget(mode: 'cli' | 'isomorphic'): GitTarget {
  return {
    name: `local disk (${mode === 'cli' ? 'git CLI' : 'isomorphic-git'})`,
    backend: mode === 'cli' ? 'cli' : 'isomorphic-git',
    local: true,
    async open(dir) {
      const root = copyOf(dir)
      const workspace = localWorkspace(root, { git: mode })
      const session = await Agent.create().session(workspace, { gitAuthor: AUTHOR })
      return {
        workspace,
        session,
        materialize: async () => root,
        close: () => session.close(),
      }
    },
  }
}

/** Workspaces whose contents are loaded from disk and dumped back for the oracle. */
export function portTarget(
  name: string,
  make: (files: Record<string, Uint8Array>) => Promise<WorkspaceServices>,
): GitTarget {
  return {
    name,
    backend: 'isomorphic-git',
    local: false,
    async open(dir) {
      const workspace = await make(filesOf(dir))
      const session = await Agent.create().session(workspace, { gitAuthor: AUTHOR })
      return {
        workspace,
        session,
        materialize: () => dump(workspace),
        close: () => session.close(),
      }
    },
  }
}

export const cliTarget = localTarget('cli')
export const isomorphicLocalTarget = localTarget('isomorphic')
export const memoryTarget = portTarget('memory', async (files) => memoryWorkspace(files))

/**
 * Gives the repository in `dir` a real `origin`: a bare repository in a temp dir, pushed to with
 * `main` tracking `origin/main` (`branch.main.remote`/`merge`, `refs/remotes/origin/main`).
 */
export function withOrigin(dir: string): string {
  const bare = tempDir('isoagent-git-origin-')
  git(bare, 'init', '-q', '--bare', '--initial-branch=main')
  git(dir, 'remote', 'set-url', 'origin', bare)
  git(dir, 'push', '-q', '-u', 'origin', 'main')
  return bare
}

/** Packed objects past which git's auto abbreviation is 8 digits (2^14). */
export const EIGHT_DIGIT_OBJECTS = 2 ** 14

/**
 * A repository with more than 2^14 packed objects (one pack written by `git fast-import`), where
 * git abbreviates object ids to 8 digits: `main` has one commit with `src/app.js` and
 * `README.md`; the other blobs are unreferenced.
 */
export function largeRepo(): string {
  const dir = tempDir()
  git(dir, 'init', '-q', '--initial-branch=main')
  const parts: string[] = []
  const blob = (mark: number, data: string) =>
    parts.push(`blob\nmark :${mark}\ndata ${Buffer.byteLength(data)}\n${data}\n`)
  blob(1, source('app', 40))
  blob(2, '# large\n')
  for (let i = 0; i < EIGHT_DIGIT_OBJECTS + 16; i++) blob(i + 3, `object ${i}\n`)
  const message = 'Large commit\n'
  parts.push(
    `commit refs/heads/main\ncommitter ${AUTHOR.name} <${AUTHOR.email}> 1700000000 +0200\n` +
      `data ${message.length}\n${message}M 100644 :1 src/app.js\nM 100644 :2 README.md\n\n`,
  )
  execFileSync('git', ['fast-import', '--quiet'], {
    cwd: dir,
    env: gitEnv(),
    input: parts.join(''),
    stdio: ['pipe', 'ignore', 'pipe'],
  })
  git(dir, 'reset', '-q', '--hard', 'main')
  return dir
}

/** Two blob contents whose ids share their first 7 hex digits (`2acdf8c`). */
export const COLLIDING_BLOBS = ['collision 26993\n', 'collision 30025\n'] as const
