// R2 workspace facts beyond the shared suites, against Miniflare's local R2 (workerd).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, IsoagentError, WorkspacePath } from '../../adapters/index.ts'
import {
  r2Workspace,
  type R2BucketLike,
  type R2ObjectBodyLike,
  type R2RangeLike,
} from '../../adapters/r2/index.ts'
import { freshPrefix, rawKeys, seed, startLocalR2, type LocalR2 } from './miniflare-r2.ts'

const p = (path: string) => WorkspacePath.parse(path)
const enc = new TextEncoder()
const dec = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

let r2: LocalR2
beforeAll(async () => {
  r2 = await startLocalR2()
})
afterAll(async () => {
  await r2?.close()
})

async function failure(run: () => unknown): Promise<IsoagentError> {
  try {
    await run()
  } catch (error) {
    if (error instanceof IsoagentError) return error
    throw new Error(`expected an IsoagentError, got ${String(error)}`, { cause: error })
  }
  throw new Error('expected a failure')
}

/** `bucket` with every `get`'s options recorded, and an optional failure injected. */
function recording(bucket: R2BucketLike, failGet?: string) {
  const gets: { key: string; range?: R2RangeLike }[] = []
  const wrapped: R2BucketLike = {
    head: (k) => bucket.head(k),
    list: (o) => bucket.list(o),
    put: (k, v, o) => bucket.put(k, v, o),
    delete: (k) => bucket.delete(k),
    async get(key, options): Promise<R2ObjectBodyLike | null> {
      gets.push({ key, ...(options?.range ? { range: options.range } : {}) })
      if (failGet !== undefined) throw new Error(failGet)
      return bucket.get(key, options)
    },
  }
  return { bucket: wrapped, gets }
}

describe('r2 workspace', () => {
  it('refuses what is not a binding, and bad options, with typed errors', async () => {
    for (const bad of [undefined, null, {}, { get() {} }, 'BUCKET'])
      expect(await failure(() => r2Workspace(bad as never))).toMatchObject({
        code: 'invalid_argument',
      })
    for (const prefix of ['/abs', 'a/../b', 'a//b', 'x\u0000'])
      expect((await failure(() => r2Workspace(r2.bucket, { prefix }))).code).toBe('invalid_path')
    for (const listPageSize of [0, 1001, 1.5])
      expect((await failure(() => r2Workspace(r2.bucket, { listPageSize }))).code).toBe(
        'invalid_argument',
      )
    const long = await failure(() =>
      r2Workspace(r2.bucket, { prefix: 'p/' }).write(
        p(
          'x'.repeat(200) +
            '/' +
            'y'.repeat(250) +
            '/' +
            'z'.repeat(250) +
            '/' +
            'w'.repeat(250) +
            '/' +
            'v'.repeat(100),
        ),
        enc.encode('x'),
      ),
    )
    expect(long).toMatchObject({ code: 'invalid_path' })
    expect(long.message).toContain('R2 key')
  })

  it('reads a range with one ranged get of only those bytes', async () => {
    const prefix = freshPrefix('unit/')
    await seed(r2.bucket, prefix, { 'big.txt': 'x'.repeat(100_000) + 'TAIL' })
    const { bucket, gets } = recording(r2.bucket)
    const ws = r2Workspace(bucket, { prefix })
    expect(dec(await ws.read(p('big.txt'), { offset: 100_000, length: 4 }))).toBe('TAIL')
    expect(gets).toEqual([{ key: `${prefix}big.txt`, range: { offset: 100_000, length: 4 } }])
    expect([...(await ws.read(p('big.txt'), { offset: 200_000 }))]).toEqual([])
    const streamed = await new Response(
      await ws.readStream(p('big.txt'), { offset: 99_998, length: 10 }),
    ).text()
    expect(streamed).toBe('xxTAIL')
  })

  it('hides keys outside the prefix and keys no path can name', async () => {
    const area = freshPrefix('unit/')
    await seed(r2.bucket, area, {
      'ws/ok.txt': 'ok',
      'ws/a/../x': 'dotdot',
      'ws/ctl\u0001': 'control',
      'ws-outside.txt': 'outside',
    })
    const ws = r2Workspace(r2.bucket, { prefix: `${area}ws` })
    expect((await ws.list(p(''))).entries.map((e) => e.name)).toEqual(['a', 'ok.txt'])
    const session = await Agent.create().session(ws)
    expect(await session.glob('**/*')).toEqual(['ok.txt'])
    await session.close()
  })

  it('turns binding failures into short typed errors', async () => {
    const prefix = freshPrefix('unit/')
    await seed(r2.bucket, prefix, { 'a.txt': 'a' })
    const busy = recording(r2.bucket, 'get: Reduce your concurrent request rate (10058)')
    const err = await failure(() => r2Workspace(busy.bucket, { prefix }).read(p('a.txt')))
    expect(err).toMatchObject({ code: 'io', data: { r2_code: 10058, retryable: true } })
    expect(err.message).not.toMatch(/\n|at .+:\d+/)
    const denied = recording(r2.bucket, 'get: Access denied (10003)')
    expect(
      (await failure(() => r2Workspace(denied.bucket, { prefix }).read(p('a.txt')))).code,
    ).toBe('permission_denied')
    const session = await Agent.create().session(r2Workspace(busy.bucket, { prefix }))
    const result = await session.tool('read', { file_path: 'a.txt' })
    expect(result).toMatchObject({ exitCode: 1, errorKind: { type: 'transport' } })
    await session.close()
  })

  it('snapshots the binding and prefix; resuming needs the binding given again', async () => {
    const prefix = freshPrefix('unit/')
    await seed(r2.bucket, prefix, { 'a.txt': 'resumed\n' })
    const ws = r2Workspace(r2.bucket, { prefix, binding: 'FILES' })
    const session = await Agent.create().session(ws)
    const snapshot = session.snapshot()
    await session.close()
    expect(snapshot.workspace).toEqual({ kind: 'r2', binding: 'FILES', prefix })
    const refused = await failure(() => Agent.create().resumeSession(snapshot))
    expect(refused.code).toBe('unsupported')
    expect(refused.message).toContain('r2Workspace(env.FILES')
    const resumed = await Agent.create().resumeSession(snapshot, { workspace: ws })
    expect(await resumed.readFile('a.txt')).toBe('     1\tresumed')
    await resumed.close()
  })

  it('removes and renames trees larger than one list page, all keys under the wall', async () => {
    const prefix = freshPrefix('unit/')
    const files = Object.fromEntries(
      Array.from({ length: 25 }, (_, i) => [`d/f${String(i).padStart(2, '0')}.txt`, `${i}`]),
    )
    await seed(r2.bucket, prefix, files)
    const ws = r2Workspace(r2.bucket, { prefix, listPageSize: 4 })
    await ws.rename(p('d'), p('e'))
    expect((await ws.list(p('e'))).entries).toHaveLength(25)
    expect(dec(await ws.read(p('e/f24.txt')))).toBe('24')
    await ws.remove(p('e'), { recursive: true })
    expect(await rawKeys(r2.bucket, prefix)).toEqual([])
  })
})
