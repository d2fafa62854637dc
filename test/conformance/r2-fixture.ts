import { Agent } from '../../adapters/index.ts'
import { r2Workspace, type R2BucketLike } from '../../adapters/r2/index.ts'
import { freshPrefix, rawBytes, rawKeys, seed, wipe } from '../r2/miniflare-r2.ts'
import type { FixtureFactory } from './fixture.ts'
import { OUTSIDE_KEYS } from './s3-fixture.ts'

/**
 * A fixture per test: a fresh `…/ws/` prefix of the bucket seeded with `put`, next to keys
 * outside the prefix (one sharing its spelling without the slash). `tree()` lists the raw keys
 * of the whole area, markers included, so any write outside the prefix or any stray marker shows.
 */
export function r2Fixture(bucket: () => R2BucketLike, base = 'conf/'): FixtureFactory {
  return async (files) => {
    const b = bucket()
    const area = freshPrefix(base)
    const prefix = `${area}ws/`
    await seed(b, prefix, files)
    await seed(b, area, Object.fromEntries(OUTSIDE_KEYS.map((k) => [k, `outside ${k}\n`])))
    const workspace = r2Workspace(b, { prefix })
    const session = await Agent.create().session(workspace)
    return {
      workspace,
      session,
      async tree() {
        const keys = await rawKeys(b, area)
        const bodies = await Promise.all(keys.map((key) => rawBytes(b, key)))
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
        return rawBytes(b, prefix + path)
      },
      async cleanup() {
        await session.close()
        await wipe(b, area)
      },
    }
  }
}
