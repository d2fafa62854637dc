import { S3Client } from '@aws-sdk/client-s3'
import { afterAll, beforeAll } from 'vitest'
import { s3Workspace } from '../../adapters/s3/index.ts'
import { freshPrefix, startS3rver, wipe, type S3rverHandle } from '../s3/server.ts'
import type { FixtureFactory } from './fixture.ts'
import { portConformance } from './port-cases.ts'
import { s3Fixture } from './s3-fixture.ts'
import { toolConformance } from './tool-cases.ts'

const BUCKET = 'isoagent-conformance'
let server: S3rverHandle
let client: S3Client

beforeAll(async () => {
  server = await startS3rver([BUCKET])
  client = server.client()
})
afterAll(async () => {
  await server?.close()
})

// The factories read `client` when a test runs, after beforeAll has started the server.
const fixture: FixtureFactory = (files) => s3Fixture(client, BUCKET)(files)

toolConformance('s3 (s3rver)', fixture, { localDisk: false })

portConformance('s3 (s3rver)', async () => {
  const prefix = freshPrefix('port/')
  return {
    workspace: s3Workspace({ bucket: BUCKET, prefix, client }),
    cleanup: () => wipe(client, BUCKET, prefix),
  }
})

// The same suites against a real S3-compatible endpoint, only when one is configured:
// ISOAGENT_S3_BUCKET (required), ISOAGENT_S3_PREFIX (default "isoagent-test/"),
// ISOAGENT_S3_ENDPOINT and ISOAGENT_S3_REGION (optional; credentials from the usual AWS
// environment). Each test works under a fresh prefix below ISOAGENT_S3_PREFIX and deletes it.
const realBucket = process.env.ISOAGENT_S3_BUCKET
if (realBucket === undefined || realBucket === '') {
  console.log(
    's3 conformance: no ISOAGENT_S3_BUCKET set, so the real-endpoint run is not registered',
  )
} else {
  const realPrefix = process.env.ISOAGENT_S3_PREFIX ?? 'isoagent-test/'
  const endpoint = process.env.ISOAGENT_S3_ENDPOINT
  const region = process.env.ISOAGENT_S3_REGION ?? process.env.AWS_REGION ?? 'us-east-1'
  let real: S3Client
  beforeAll(() => {
    real = new S3Client({
      region,
      ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    })
  })
  afterAll(() => real?.destroy())
  const realFixture: FixtureFactory = (files) => s3Fixture(real, realBucket, realPrefix)(files)
  toolConformance(`s3 (${endpoint ?? 'AWS'} ${realBucket})`, realFixture, { localDisk: false })
  portConformance(`s3 (${endpoint ?? 'AWS'} ${realBucket})`, async () => {
    const prefix = freshPrefix(realPrefix)
    return {
      workspace: s3Workspace({ bucket: realBucket, prefix, client: real }),
      cleanup: () => wipe(real, realBucket, prefix),
    }
  })
}
