// The index's caps on object-store workspaces (S3, R2), counted at the store: with `maxFiles` the
// walk stops at the cap and reads nothing past it; an object over the per-file size cap (512 KiB)
// is judged by its size alone and never fetched; every other object is fetched exactly once per
// build (the `read` GETs, counted by the test's store wrapper).
import { expect } from 'vitest'
import {
  Agent,
  openAICompatibleEmbeddings,
  type RetrievalLimits,
  type Session,
  type WorkspaceServices,
} from '../../adapters/index.ts'
import { FAKE_DIMENSION, type FakeEmbeddings } from './fake-embeddings.ts'

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 97} close`).join(' ')

/** Five small eligible objects, one over the size cap, one excluded. */
export const CAPS_FILES: Record<string, string> = {
  'a/one.ts': 'export function stopServer() {\n  // teardown the listener\n}\n',
  'a/two.ts': 'export function openDatabase() {}\n',
  'b/three.md': `# Notes\n${words(12_000)}\n`, // ~140 KiB: many chunks, still one GET
  'b/four.ts': 'export const four = 4\n',
  'c/huge.txt': 'x'.repeat(512 * 1024 + 1),
  'node_modules/x/index.js': 'module.exports = 1\n',
}

/** The workspace under test, and the keys (relative to its root) its store was asked to GET. */
export interface CountedWorkspace {
  workspace: WorkspaceServices
  gets: () => string[]
}

async function built(
  fake: FakeEmbeddings,
  workspace: WorkspaceServices,
  limits: Partial<RetrievalLimits>,
): Promise<Session> {
  const session = await Agent.create().session(workspace, {
    retrieval: {
      embeddings: openAICompatibleEmbeddings({
        baseURL: fake.url,
        model: 'm',
        dimensions: FAKE_DIMENSION,
      }),
      limits,
    },
  })
  for (let i = 0; i < 1500 && session.retrievalStatus()!.phase === 'building'; i++)
    await new Promise((r) => setTimeout(r, 20))
  return session
}

const fileGets = (gets: string[]) => gets.filter((k) => k in CAPS_FILES).sort()

/** `open()` gives a fresh counted workspace over a prefix seeded with {@link CAPS_FILES}. */
export async function objectStoreCapsCase(
  fake: FakeEmbeddings,
  open: () => Promise<CountedWorkspace>,
): Promise<void> {
  const all = await open()
  const full = await built(fake, all.workspace, {})
  expect(full.retrievalStatus()).toMatchObject({
    phase: 'ready',
    eligibleFiles: 4,
    indexedFiles: 4,
    failedFiles: 0,
  })
  // Every eligible object fetched once; the huge one and the excluded one never.
  expect(fileGets(all.gets())).toEqual(['a/one.ts', 'a/two.ts', 'b/four.ts', 'b/three.md'])
  await full.close()

  const capped = await open()
  const two = await built(fake, capped.workspace, { maxFiles: 2 })
  expect(two.retrievalStatus()).toMatchObject({ phase: 'ready', eligibleFiles: 2, indexedFiles: 2 })
  const gets = fileGets(capped.gets())
  expect(gets).toHaveLength(2)
  expect(new Set(gets).size).toBe(2)
  expect(gets).not.toContain('c/huge.txt')
  const hit = await two.tool('search', { mode: 'semantic', query: 'shutdown' })
  expect(hit.exitCode).toBe(0)
  await two.close()
}
