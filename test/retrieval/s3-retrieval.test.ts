// Retrieval over an S3 workspace (s3rver on loopback): see object-store-case.ts.
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { s3Workspace } from '../../adapters/s3/index.ts'
import { freshPrefix, seed, startS3rver, wipe, type S3rverHandle } from '../s3/server.ts'
import { startFakeEmbeddings, type FakeEmbeddings } from './fake-embeddings.ts'
import { OBJECT_FILES, objectStoreRetrievalCase } from './object-store-case.ts'
import { CAPS_FILES, objectStoreCapsCase } from './object-store-caps-case.ts'

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
    await seed(client, BUCKET, prefix, OBJECT_FILES)
    await objectStoreRetrievalCase(
      fake,
      s3Workspace({ bucket: BUCKET, prefix, client }),
      async (path, text) => {
        const body = new TextEncoder().encode(text)
        await client.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: prefix + path,
            Body: body,
            ContentLength: body.length,
          }),
        )
      },
    )
    await wipe(client, BUCKET, prefix)
  }, 60_000)

  it('respects maxFiles and the size cap, and GETs each object once per build', async () => {
    const prefixes: string[] = []
    await objectStoreCapsCase(fake, async () => {
      const prefix = freshPrefix('caps/')
      prefixes.push(prefix)
      await seed(client, BUCKET, prefix, CAPS_FILES)
      // A client of its own, counting each GetObject request as sent (one per HTTP attempt:
      // the deserialize step runs below the retry middleware).
      const counted = s3.client()
      const gets: string[] = []
      counted.middlewareStack.add(
        (next, context) => async (args) => {
          const key = (args.input as { Key?: string }).Key
          if (context.commandName === 'GetObjectCommand' && key?.startsWith(prefix))
            gets.push(key.slice(prefix.length))
          return next(args)
        },
        { step: 'deserialize', name: 'countGets' },
      )
      return {
        workspace: s3Workspace({ bucket: BUCKET, prefix, client: counted }),
        gets: () => gets,
      }
    })
    for (const prefix of prefixes) await wipe(client, BUCKET, prefix)
  }, 60_000)
})
