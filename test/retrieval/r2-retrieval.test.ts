// Retrieval over an R2 workspace (Miniflare's R2 in workerd, through the binding proxy): see
// object-store-case.ts.
import { afterAll, beforeAll, describe, it } from 'vitest'
import { r2Workspace } from '../../adapters/r2/index.ts'
import { freshPrefix, seed, startLocalR2, wipe, type LocalR2 } from '../r2/miniflare-r2.ts'
import { startFakeEmbeddings, type FakeEmbeddings } from './fake-embeddings.ts'
import { OBJECT_FILES, objectStoreRetrievalCase } from './object-store-case.ts'

let r2: LocalR2
let fake: FakeEmbeddings
beforeAll(async () => {
  ;[r2, fake] = await Promise.all([startLocalR2(), startFakeEmbeddings()])
}, 60_000)
afterAll(async () => {
  await Promise.all([r2?.close(), fake?.close()])
})

describe('retrieval on R2', () => {
  it('indexes, answers verified hits, drops a stale one, never sends excluded keys', async () => {
    const prefix = freshPrefix('retrieval/')
    await seed(r2.bucket, prefix, OBJECT_FILES)
    await objectStoreRetrievalCase(fake, r2Workspace(r2.bucket, { prefix }), async (path, text) => {
      await r2.bucket.put(prefix + path, new TextEncoder().encode(text))
    })
    await wipe(r2.bucket, prefix)
  }, 60_000)
})
