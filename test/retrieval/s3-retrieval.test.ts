// Retrieval over an S3 workspace (s3rver on loopback): the index builds through the workspace
// port, semantic and hybrid answer verified hits, an object rewritten behind the index is
// dropped as stale, and excluded keys are never sent to the embedder.
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, openAICompatibleEmbeddings } from '../../adapters/index.ts'
import { s3Workspace } from '../../adapters/s3/index.ts'
import { freshPrefix, seed, startS3rver, wipe, type S3rverHandle } from '../s3/server.ts'
import { FAKE_DIMENSION, startFakeEmbeddings, type FakeEmbeddings } from './fake-embeddings.ts'

const BUCKET = 'retrieval'
let s3: S3rverHandle
let client: S3Client
let fake: FakeEmbeddings
beforeAll(async () => {
  ;[s3, fake] = await Promise.all([startS3rver([BUCKET]), startFakeEmbeddings()])
  client = s3.client()
}, 60_000)
afterAll(async () => {
  await Promise.all([s3?.close(), fake?.close()])
})

describe('retrieval on S3', () => {
  it('indexes, answers verified hits, drops a stale one, never sends excluded keys', async () => {
    const prefix = freshPrefix('retrieval/')
    await seed(client, BUCKET, prefix, {
      'src/server.ts': 'export function stopServer() {\n  // teardown the listener\n}\n',
      'src/db.ts': 'export function openDatabase() {}\n',
      'node_modules/x/index.js': 'NODE_MODULES_TEXT close\n',
      'deploy/server.pem': 'PEM_TEXT\n',
    })
    const session = await Agent.create().session(s3Workspace({ bucket: BUCKET, prefix, client }), {
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
    const body = new TextEncoder().encode('export const unrelated = 1\n')
    await client.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: `${prefix}src/server.ts`,
        Body: body,
        ContentLength: body.length,
      }),
    )
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
    await wipe(client, BUCKET, prefix)
  }, 60_000)
})
