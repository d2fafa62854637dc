import type { S3Client } from '@aws-sdk/client-s3'
import { Agent } from '../../adapters/index.ts'
import { s3Workspace, type S3WorkspaceOptions } from '../../adapters/s3/index.ts'
import { freshPrefix, rawBytes, rawKeys, seed, wipe } from '../s3/server.ts'
import type { FixtureFactory } from './fixture.ts'

/** Keys planted next to every fixture's prefix, which no tool may ever touch. */
export const OUTSIDE_KEYS = ['outside.txt', 'ws', 'ws-outside.txt', 'wsx/secret.txt']

/**
 * A fixture per test: a fresh `…/ws/` prefix seeded with PutObject, next to keys outside the
 * prefix (one sharing its spelling without the slash). `tree()` lists the raw keys of the whole
 * area, markers included, so any write outside the prefix or any stray marker shows.
 */
export function s3Fixture(
  client: S3Client,
  bucket: string,
  base = 'conf/',
  options: Partial<S3WorkspaceOptions> = {},
): FixtureFactory {
  return async (files) => {
    const area = freshPrefix(base)
    const prefix = `${area}ws/`
    await seed(client, bucket, prefix, files)
    await seed(
      client,
      bucket,
      area,
      Object.fromEntries(OUTSIDE_KEYS.map((k) => [k, `outside ${k}\n`])),
    )
    const workspace = s3Workspace({ bucket, prefix, client, ...options })
    const session = await Agent.create().session(workspace)
    return {
      workspace,
      session,
      async tree() {
        const keys = await rawKeys(client, bucket, area)
        const bodies = await Promise.all(keys.map((key) => rawBytes(client, bucket, key)))
        return new Map(
          keys.map((key, i) => [
            key.startsWith(prefix)
              ? key.slice(prefix.length)
              : `<outside>:${key.slice(area.length)}`,
            bodies[i] ?? new Uint8Array(),
          ]),
        )
      },
      async bytes(path) {
        return rawBytes(client, bucket, prefix + path)
      },
      async cleanup() {
        await session.close()
        await wipe(client, bucket, area)
      },
    }
  }
}
