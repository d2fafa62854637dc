// Retrieval over an R2 workspace (Miniflare's R2 in workerd, through the binding proxy): see
// object-store-case.ts.
import { afterAll, beforeAll, describe, it } from 'vitest'
import { r2Workspace, type R2BucketLike } from '../../adapters/r2/index.ts'
import { freshPrefix, seed, startLocalR2, wipe, type LocalR2 } from '../r2/miniflare-r2.ts'
import { startFakeEmbeddings, type FakeEmbeddings } from './fake-embeddings.ts'
import { OBJECT_FILES, objectStoreRetrievalCase } from './object-store-case.ts'
import { CAPS_FILES, objectStoreCapsCase } from './object-store-caps-case.ts'

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

  it('respects maxFiles and the size cap, and GETs each object once per build', async () => {
    const prefixes: string[] = []
    await objectStoreCapsCase(fake, async () => {
      const prefix = freshPrefix('caps/')
      prefixes.push(prefix)
      await seed(r2.bucket, prefix, CAPS_FILES)
      // The binding, counting each get() as it reaches workerd's R2.
      const b = r2.bucket
      const gets: string[] = []
      const counted: R2BucketLike = {
        head: (key) => b.head(key),
        get: (key, options) => {
          if (key.startsWith(prefix)) gets.push(key.slice(prefix.length))
          return b.get(key, options)
        },
        put: (key, value, options) => b.put(key, value, options),
        list: (options) => b.list(options),
        delete: (keys) => b.delete(keys),
      }
      return { workspace: r2Workspace(counted, { prefix }), gets: () => gets }
    })
    for (const prefix of prefixes) await wipe(r2.bucket, prefix)
  }, 60_000)
})
