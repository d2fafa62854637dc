// One retrieval case for object-store workspaces (S3, R2): the index builds through the
// workspace port, semantic and hybrid answer verified hits, an object rewritten behind the index
// is dropped as stale, and excluded keys are never sent to the embedder.
import { expect } from 'vitest'
import { Agent, openAICompatibleEmbeddings, type WorkspaceServices } from '../../adapters/index.ts'
import { FAKE_DIMENSION, type FakeEmbeddings } from './fake-embeddings.ts'

export const OBJECT_FILES: Record<string, string> = {
  'src/server.ts': 'export function stopServer() {\n  // teardown the listener\n}\n',
  'src/db.ts': 'export function openDatabase() {}\n',
  'node_modules/x/index.js': 'NODE_MODULES_TEXT close\n',
  'deploy/server.pem': 'PEM_TEXT\n',
}

export async function objectStoreRetrievalCase(
  fake: FakeEmbeddings,
  workspace: WorkspaceServices,
  rewrite: (path: string, text: string) => Promise<void>,
): Promise<void> {
  const session = await Agent.create().session(workspace, {
    retrieval: {
      embeddings: openAICompatibleEmbeddings({
        baseURL: fake.url,
        model: 'm',
        dimensions: FAKE_DIMENSION,
      }),
      readinessTimeoutMs: 20_000,
    },
  })
  const r = await session.tool('search', { mode: 'semantic', query: 'shutdown' })
  expect(r.exitCode).toBe(0)
  expect(session.retrievalStatus()).toMatchObject({ phase: 'ready', indexedFiles: 2 })
  const hits = r.metadata!.results as { path: string; digest_verified: boolean }[]
  expect(hits[0]).toMatchObject({ path: 'src/server.ts', digest_verified: true })
  const hybrid = await session.tool('search', { mode: 'hybrid', query: 'openDatabase' })
  expect((hybrid.metadata!.results as { path: string }[])[0]!.path).toBe('src/db.ts')
  await rewrite('src/server.ts', 'export const unrelated = 1\n')
  const stale = await session.tool('search', { mode: 'semantic', query: 'shutdown' })
  expect(stale.metadata!.fallback).toBe('filtered_stale_hits')
  expect(
    (stale.metadata!.results as { path: string }[]).some((h) => h.path === 'src/server.ts'),
  ).toBe(false)
  const sent = fake.inputs.join('\n')
  expect(sent).not.toContain('NODE_MODULES_TEXT')
  expect(sent).not.toContain('PEM_TEXT')
  await session.close()
  expect(session.retrievalStatus()!.phase).toBe('closed')
}
