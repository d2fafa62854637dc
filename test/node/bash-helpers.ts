import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { Agent, type Session, type SessionOptions, type ToolResult } from '../../adapters/index.ts'
import { localWorkspace, type LocalWorkspaceOptions } from '../../adapters/node/index.ts'

const roots: string[] = []
const sessions: Session[] = []

export function newRoot(files: Record<string, string> = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'isoagent-bash-'))
  roots.push(root)
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true })
    writeFileSync(join(root, path), content)
  }
  return root
}

export async function open(
  files: Record<string, string> = {},
  options: SessionOptions = {},
  workspaceOptions: LocalWorkspaceOptions = {},
): Promise<{ session: Session; root: string }> {
  const root = newRoot(files)
  const session = await Agent.create().session(localWorkspace(root, workspaceOptions), options)
  sessions.push(session)
  return { session, root }
}

/** True while `pid` is a live process (a zombie left to a non-reaping init counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

export function pidsIn(text: string): number[] {
  return [...text.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]))
}

export interface BashMetadata {
  exit_code: number | null
  signal: string | null
  timeout_ms: number
  duration_ms: number
  output: {
    total_bytes: number
    captured_bytes: number
    truncated: boolean
    timed_out: boolean
    stdout: { total_bytes: number; captured_bytes: number; shown_bytes: number; truncated: boolean }
    stderr: { total_bytes: number; captured_bytes: number; shown_bytes: number; truncated: boolean }
  }
  cancelled: boolean
  pipes_held_open: boolean
  background_killed: boolean
  survivors: number
  changed_paths: {
    created: string[]
    modified: string[]
    deleted: string[]
    truncated: boolean
    scanned: number
  } | null
}

export const meta = (r: ToolResult) => r.metadata as unknown as BashMetadata

export async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now()
  const value = await run()
  return { value, ms: Date.now() - started }
}

/**
 * Register the cleanups of a bash test file, and put a secret in the parent's environment that
 * commands must never see.
 */
export function useBashFixtures(): void {
  beforeAll(() => {
    process.env.ISOAGENT_TEST_SECRET = 'do-not-leak-4711'
  })
  afterAll(async () => {
    delete process.env.ISOAGENT_TEST_SECRET
    for (const s of sessions) await s.close()
    for (const root of roots) rmSync(root, { recursive: true, force: true })
  })
}
