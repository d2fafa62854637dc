import {
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3'
import { createHash, randomBytes } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { Agent, IsoagentError, WorkspacePath } from '../../adapters/index.ts'
import { s3Workspace, type S3WorkspaceOptions } from '../../adapters/s3/index.ts'
import { listDirectory, type RawPage } from '../../src/object-store/directory-listing.ts'
import {
  barrier,
  countingAgent,
  listen,
  recordCommands,
  s3ErrorResponse,
  startConditionalProxy,
  type LocalServer,
} from './fakes.ts'
import {
  freshPrefix,
  rawBytes,
  rawKeys,
  s3rverConfig,
  seed,
  startS3rver,
  type S3rverHandle,
} from './server.ts'

const BUCKET = 'isoagent-s3'
const MiB = 1024 * 1024
const p = (path: string) => WorkspacePath.parse(path)
const enc = new TextEncoder()
const dec = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

let server: S3rverHandle
let client: S3Client

beforeAll(async () => {
  server = await startS3rver([BUCKET])
  client = server.client()
})

const cleanups: (() => Promise<unknown> | unknown)[] = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})
afterAll(async () => {
  await server?.close()
})

/** A workspace under a fresh prefix, seeded with `files`. */
async function workspaceWith(
  files: Record<string, string | Uint8Array> = {},
  options: Partial<S3WorkspaceOptions> = {},
) {
  const prefix = freshPrefix('unit/')
  await seed(client, BUCKET, prefix, files)
  const workspace = s3Workspace({ bucket: BUCKET, prefix, client, ...options })
  return { workspace, prefix }
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

async function failure(run: () => Promise<unknown>): Promise<IsoagentError> {
  try {
    await run()
  } catch (error) {
    if (error instanceof IsoagentError) return error
    throw new Error(`expected an IsoagentError, got ${String(error)}`, { cause: error })
  }
  throw new Error('expected a failure')
}

/** Messages are one short human line: no stack, no XML, no SDK internals. */
function expectHumanMessage(error: IsoagentError) {
  expect(error.message).not.toMatch(/\n|\bat .+:\d+|<\?xml|<Error>|\$metadata/)
  expect(error.message.length).toBeLessThan(240)
}

describe('s3 workspace: the prefix is a wall', () => {
  const outside = {
    'wall/ws': 'object named like the prefix without its slash\n',
    'wall/ws-evil/secret.txt': 'secret next door\n',
    'wall/secret.txt': 'secret above\n',
    'other/secret.txt': 'secret elsewhere\n',
  }

  it('never lists, reads or searches a key outside the prefix', async () => {
    await seed(client, BUCKET, '', outside)
    await seed(client, BUCKET, 'wall/ws/', { 'a.txt': 'inside\n', 'dir/b.txt': 'also inside\n' })
    const ws = s3Workspace({ bucket: BUCKET, prefix: 'wall/ws', client })
    expect(ws.descriptor).toEqual({ kind: 's3', bucket: BUCKET, prefix: 'wall/ws/' })
    expect((await ws.list(p(''))).entries.map((e) => e.name)).toEqual(['a.txt', 'dir'])
    const session = await Agent.create().session(ws)
    cleanups.push(() => session.close())
    expect(await session.glob('**')).toEqual(['a.txt', 'dir/b.txt'])
    expect(await session.grep('secret')).toBe('(no matches)')
    for (const path of ['../ws-evil/secret.txt', '../secret.txt', '../../other/secret.txt']) {
      const r = await session.tool('read', { file_path: path })
      expect(r.errorKind?.type, path).toBe('permission_denied')
      expect(r.output).not.toMatch(/next door|above|elsewhere/)
    }
  })

  it('refuses forged paths before sending any request', async () => {
    const own = server.client()
    const requests = recordCommands(own)
    const ws = s3Workspace({ bucket: BUCKET, prefix: 'wall/ws/', client: own })
    const forged = [
      '../secret.txt',
      'a/../../secret.txt',
      '/wall/secret.txt',
      'a//b',
      'a/./b',
      './a',
      'a/',
      'x\u0000y',
      'tab\there',
      'back\\slash',
      '%2e%2e/secret.txt',
      'seg/'.repeat(300) + 'x',
    ]
    for (const path of forged) {
      const f = path as WorkspacePath
      for (const run of [
        () => ws.read(f),
        () => ws.readStream(f),
        () => ws.stat(f),
        () => ws.write(f, enc.encode('pwned')),
        () => ws.list(f),
        () => ws.mkdir(f),
        () => ws.remove(f, { recursive: true }),
        () => ws.rename(p('a.txt'), f),
        () => ws.rename(f, p('moved.txt')),
      ]) {
        const error = await failure(run)
        expect(
          ['path_escape', 'invalid_path'],
          `${JSON.stringify(path)}: ${error.message}`,
        ).toContain(error.code)
      }
    }
    expect(requests.count()).toBe(0)
  })

  it('refuses keys over 1024 bytes and bad prefixes', async () => {
    const ws = s3Workspace({ bucket: BUCKET, prefix: 'wall/ws/', client })
    const long = p(Array.from({ length: 5 }, () => 'x'.repeat(250)).join('/'))
    expect((await failure(() => ws.write(long, enc.encode('x')))).code).toBe('invalid_path')
    for (const prefix of ['/abs', 'a//b', '../x', 'a/../b', 'a/./b', 'ctl\u0001', 'a//']) {
      expect(() => s3Workspace({ bucket: BUCKET, prefix, client }), prefix).toThrow(IsoagentError)
    }
    expect(s3Workspace({ bucket: BUCKET, prefix: 'a/b/', client }).descriptor.prefix).toBe('a/b/')
    expect(s3Workspace({ bucket: BUCKET, client }).descriptor.prefix).toBe('')
  })

  it('writes, renames and removals land only under the prefix', async () => {
    await seed(client, BUCKET, '', outside)
    const before = new Map<string, string>()
    for (const key of await rawKeys(client, BUCKET, ''))
      if (!key.startsWith('wall/ws/')) before.set(key, sha((await rawBytes(client, BUCKET, key))!))
    const ws = s3Workspace({ bucket: BUCKET, prefix: 'wall/ws/', client })
    const session = await Agent.create().session(ws)
    cleanups.push(() => session.close())
    expect((await session.writeFile('n/new.txt', 'new\n')).exitCode).toBe(0)
    expect((await session.editFile('n/new.txt', 'new', 'edited')).exitCode).toBe(0)
    await ws.mkdir(p('made/deep'))
    await ws.rename(p('n'), p('moved'))
    await ws.remove(p('made'), { recursive: true })
    expect(await rawBytes(client, BUCKET, 'wall/ws/moved/new.txt')).toEqual(enc.encode('edited\n'))
    for (const key of await rawKeys(client, BUCKET, '')) {
      if (key.startsWith('wall/ws/')) continue
      expect(before.get(key), key).toBe(sha((await rawBytes(client, BUCKET, key))!))
    }
    expect([...before.keys()].sort()).toEqual(
      (await rawKeys(client, BUCKET, '')).filter((k) => !k.startsWith('wall/ws/')),
    )
  })

  it('hides hostile keys that no workspace path can name', async () => {
    const { workspace, prefix } = await workspaceWith({ 'ok.txt': 'fine\n' })
    // What s3rver's file store can hold; `..`, `//`, control characters and 256-byte names are
    // covered by the scripted store below (s3rver maps keys to file names).
    const hostile = ['back\\slash.txt', 'enc%2e%2e.txt', 'sub/back\\x', 'sub/%2F']
    await seed(client, BUCKET, prefix, Object.fromEntries(hostile.map((k) => [k, 'hostile\n'])))
    expect((await workspace.list(p(''))).entries.map((e) => e.name)).toEqual(['ok.txt', 'sub'])
    // The only children of sub/ are unnameable: the directory lists as empty.
    expect((await workspace.list(p('sub'))).entries).toEqual([])
    const session = await Agent.create().session(workspace)
    cleanups.push(() => session.close())
    expect(await session.glob('**')).toEqual(['ok.txt'])
    expect(await session.grep('hostile')).toBe('(no matches)')
  })

  it('ignores keys outside the prefix even when a server returns them', async () => {
    // A store that answers every listing with keys from elsewhere, and records deletions.
    const deleted: string[] = []
    const fake = {
      config: {},
      destroy() {},
      async send(command: { input: Record<string, unknown>; constructor: { name: string } }) {
        const name = command.constructor.name
        if (name === 'ListObjectsV2Command') {
          // Keys URL-encoded, as S3 sends them for EncodingType=url (form encoding: + is a space).
          expect(command.input.EncodingType).toBe('url')
          const prefix = String(command.input.Prefix)
          return {
            EncodingType: 'url',
            Contents: [
              { Key: `${prefix}inside.txt`, Size: 3 },
              { Key: `${prefix}a+b%2Bc.txt`, Size: 4 },
              { Key: `${prefix}ctl%01.txt`, Size: 1 },
              { Key: `${prefix}..`, Size: 1 },
              { Key: `${prefix}.`, Size: 1 },
              { Key: `${prefix}${'y'.repeat(256)}`, Size: 1 },
              { Key: 'elsewhere/stolen.txt', Size: 6 },
              { Key: 'wall/wsx.txt', Size: 1 },
              { Key: 'wall/ws', Size: 1 },
            ],
            CommonPrefixes: [
              { Prefix: 'elsewhere/dir/' },
              { Prefix: `${prefix}/` },
              { Prefix: `${prefix}..%2F..%2F/` },
            ],
            IsTruncated: false,
            $metadata: { httpStatusCode: 200 },
          }
        }
        if (name === 'HeadObjectCommand')
          throw Object.assign(new Error('NotFound'), {
            name: 'NotFound',
            $metadata: { httpStatusCode: 404 },
          })
        if (name === 'DeleteObjectsCommand') {
          const objects = (command.input.Delete as { Objects: { Key: string }[] }).Objects
          deleted.push(...objects.map((o) => o.Key))
          return { $metadata: { httpStatusCode: 200 } }
        }
        if (name === 'PutObjectCommand') return { ETag: '"x"', $metadata: { httpStatusCode: 200 } }
        throw new Error(`unexpected ${name}`)
      },
    } as unknown as S3Client
    const ws = s3Workspace({ bucket: BUCKET, prefix: 'wall/ws/', client: fake })
    expect((await ws.list(p(''))).entries).toEqual([
      { name: 'a b+c.txt', kind: 'file', size: 4 },
      { name: 'inside.txt', kind: 'file', size: 3 },
    ])
    await ws.remove(p('d'), { recursive: true })
    expect(deleted.filter((k) => !k.startsWith('wall/ws/d/'))).toEqual([])
    expect(deleted).toContain('wall/ws/d/inside.txt')
  })
})

describe('s3 workspace: reads', () => {
  it('reads a page of a large object with one ranged GET of only those bytes', async () => {
    const { agent, bytesReceived } = countingAgent()
    const own = new S3Client(
      s3rverConfig(server.endpoint, { requestHandler: { httpAgent: agent } }),
    )
    cleanups.push(() => own.destroy())
    const requests = recordCommands(own)
    const big = randomBytes(20 * MiB)
    const prefix = freshPrefix('unit/')
    await seed(client, BUCKET, prefix, { 'big.bin': big })
    const ws = s3Workspace({ bucket: BUCKET, prefix, client: own })

    const start = bytesReceived()
    const page = await ws.read(p('big.bin'), { offset: 10 * MiB, length: 64 * 1024 })
    expect(Buffer.from(page).equals(big.subarray(10 * MiB, 10 * MiB + 64 * 1024))).toBe(true)
    expect(requests.log).toEqual([
      {
        command: 'GetObjectCommand',
        input: expect.objectContaining({ Range: `bytes=${10 * MiB}-${10 * MiB + 64 * 1024 - 1}` }),
      },
    ])
    expect(bytesReceived() - start).toBeLessThan(64 * 1024 + 4096)

    requests.reset()
    const before = bytesReceived()
    const streamed = await collect(await ws.readStream(p('big.bin'), { offset: 20 * MiB - 100 }))
    expect(Buffer.from(streamed).equals(big.subarray(20 * MiB - 100))).toBe(true)
    expect(requests.count()).toBe(1)
    expect(bytesReceived() - before).toBeLessThan(100 + 4096)

    // A range past the end is empty (416 from the store); one that crosses it is clipped.
    expect(await ws.read(p('big.bin'), { offset: 30 * MiB, length: 10 })).toEqual(new Uint8Array())
    expect(
      Buffer.from(await ws.read(p('big.bin'), { offset: 20 * MiB - 3, length: 10 })).equals(
        big.subarray(20 * MiB - 3),
      ),
    ).toBe(true)

    // stat is one HEAD: size, ETag as the version, mtime.
    requests.reset()
    const stat = (await ws.stat(p('big.bin')))!
    expect(stat).toMatchObject({ kind: 'file', size: 20 * MiB })
    expect(stat.version).toMatch(/^[0-9a-f]{32}$/)
    expect(stat.mtimeMs).toBeGreaterThan(Date.now() - 600_000)
    expect(requests.log.map((e) => e.command)).toEqual(['HeadObjectCommand'])
  })

  it('streams a whole object without holding it, and cancels the response when dropped', async () => {
    const big = randomBytes(12 * MiB)
    const { workspace } = await workspaceWith({ 'big.bin': big })
    const stream = await workspace.readStream(p('big.bin'))
    const reader = stream.getReader()
    const first = await reader.read()
    expect(first.done).toBe(false)
    expect(first.value!.length).toBeLessThan(4 * MiB)
    expect(first.value!.constructor).toBe(Uint8Array)
    await reader.cancel()
    expect(sha(await collect(await workspace.readStream(p('big.bin'))))).toBe(sha(big))
  })

  it('round-trips 0-byte objects, multi-byte UTF-8 and CRLF byte for byte', async () => {
    const { workspace, prefix } = await workspaceWith()
    const cases: Record<string, Uint8Array> = {
      'empty.txt': new Uint8Array(),
      'ユニコード/ファイル 🎉.txt': enc.encode('日本語 ✓ emoji 🎉 combining é\n'),
      'crlf.txt': enc.encode('\uFEFFone\r\ntwo\r\n'),
      'plus+comma,semi;.txt': enc.encode('odd but legal key characters\n'),
      'bin.dat': new Uint8Array(randomBytes(4096)),
    }
    for (const [path, data] of Object.entries(cases)) {
      const out = await workspace.write(p(path), data)
      expect(out.created, path).toBe(true)
      expect(await rawBytes(client, BUCKET, prefix + path), path).toEqual(data)
      expect(await workspace.read(p(path)), path).toEqual(data)
      expect(await collect(await workspace.readStream(p(path))), path).toEqual(data)
      expect((await workspace.stat(p(path)))!.size, path).toBe(data.length)
    }
    expect(await workspace.read(p('empty.txt'), { offset: 0, length: 10 })).toEqual(
      new Uint8Array(),
    )
    expect(await workspace.read(p('empty.txt'), { offset: 5 })).toEqual(new Uint8Array())
    expect(await workspace.read(p('crlf.txt'), { length: 0 })).toEqual(new Uint8Array())
    expect((await workspace.list(p('ユニコード'))).entries).toEqual([
      { name: 'ファイル 🎉.txt', kind: 'file', size: cases['ユニコード/ファイル 🎉.txt']!.length },
    ])
    const session = await Agent.create().session(workspace)
    cleanups.push(() => session.close())
    expect(await session.readFile('ユニコード/ファイル 🎉.txt')).toBe(
      '     1\t日本語 ✓ emoji 🎉 combining é',
    )
    expect((await session.tool('read', { file_path: 'empty.txt' })).output).toBe('')
    const edit = await session.editFile('crlf.txt', 'two', 'TWO\nthree')
    expect(edit.exitCode, edit.output).toBe(0)
    expect(await rawBytes(client, BUCKET, prefix + 'crlf.txt')).toEqual(
      enc.encode('\uFEFFone\r\nTWO\r\nthree\r\n'),
    )
  })
})

describe('s3 workspace: large writes', () => {
  it('uploads ≥ 8 MiB in parts, byte-exact, and smaller objects in one PUT', async () => {
    const own = server.client()
    const requests = recordCommands(own)
    const { workspace, prefix } = await workspaceWith({}, { client: own })
    const big = new Uint8Array(randomBytes(16 * MiB + 12_345))
    const out = await workspace.write(p('big/blob.bin'), big)
    expect(out.created).toBe(true)
    expect(
      requests.log
        .map((e) => e.command)
        .filter((c) => c !== 'HeadObjectCommand' && c !== 'ListObjectsV2Command'),
    ).toEqual([
      'CreateMultipartUploadCommand',
      'UploadPartCommand',
      'UploadPartCommand',
      'UploadPartCommand',
      'CompleteMultipartUploadCommand',
    ])
    expect((await workspace.stat(p('big/blob.bin')))!.version).toBe(out.version)
    expect(sha((await rawBytes(client, BUCKET, prefix + 'big/blob.bin'))!)).toBe(sha(big))
    expect(sha(await workspace.read(p('big/blob.bin')))).toBe(sha(big))

    requests.reset()
    const small = new Uint8Array(randomBytes(8 * MiB - 1))
    await workspace.write(p('small.bin'), small)
    expect(requests.count('PutObjectCommand')).toBe(1)
    expect(requests.count('CreateMultipartUploadCommand')).toBe(0)
    expect(sha(await workspace.read(p('small.bin')))).toBe(sha(small))

    // rename copies server-side and keeps every byte.
    await workspace.rename(p('big/blob.bin'), p('moved/blob.bin'))
    expect(sha(await workspace.read(p('moved/blob.bin')))).toBe(sha(big))
    expect(await workspace.stat(p('big/blob.bin'))).toBeUndefined()
    expect(await workspace.stat(p('big'))).toMatchObject({ kind: 'directory' })
  })

  it('stays byte-exact with the SDK default checksums (CRC32 per part)', async () => {
    const defaults = server.client({
      requestChecksumCalculation: 'WHEN_SUPPORTED',
      responseChecksumValidation: 'WHEN_SUPPORTED',
    })
    const requests = recordCommands(defaults)
    const { workspace, prefix } = await workspaceWith({}, { client: defaults })
    const big = new Uint8Array(randomBytes(9 * MiB))
    const small = enc.encode('small with a checksum\n')
    await workspace.write(p('big.bin'), big)
    await workspace.write(p('small.txt'), small)
    expect(
      requests.log.find((e) => e.command === 'CreateMultipartUploadCommand')?.input,
    ).toMatchObject({
      ChecksumAlgorithm: 'CRC32',
    })
    expect(sha((await rawBytes(client, BUCKET, prefix + 'big.bin'))!)).toBe(sha(big))
    expect(await rawBytes(client, BUCKET, prefix + 'small.txt')).toEqual(small)
    expect(sha(await workspace.read(p('big.bin')))).toBe(sha(big))
    expect(await workspace.read(p('small.txt'))).toEqual(small)
  })

  it('aborts the multipart upload when a part fails, and leaves no object', async () => {
    const own = server.client({ maxAttempts: 1 })
    const requests = recordCommands(own)
    own.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { PartNumber?: number }
        if (context.commandName === 'UploadPartCommand' && input.PartNumber === 2)
          throw Object.assign(new Error('We encountered an internal error.'), {
            name: 'InternalError',
            $metadata: { httpStatusCode: 500 },
          })
        return next(args)
      },
      { step: 'initialize', name: 'failPartTwo', priority: 'low' },
    )
    const { workspace } = await workspaceWith({}, { client: own })
    const error = await failure(() => workspace.write(p('broken.bin'), new Uint8Array(17 * MiB)))
    expect(error.code).toBe('io')
    expect(error.message).toBe('S3 write of broken.bin failed: InternalError (HTTP 500)')
    expectHumanMessage(error)
    expect(requests.count('AbortMultipartUploadCommand')).toBe(1)
    expect(requests.count('CompleteMultipartUploadCommand')).toBe(0)
    expect(await workspace.stat(p('broken.bin'))).toBeUndefined()
  })
})

describe('s3 workspace: directories', () => {
  it('treats prefixes and markers as directories, keeps emptied ones, renames and removes trees', async () => {
    const own = server.client()
    const requests = recordCommands(own)
    const { workspace, prefix } = await workspaceWith(
      {
        'src/a.ts': 'a\n',
        'src/deep/b+c.ts': 'b\n',
        'src/deep/é.ts': 'é\n',
        'top.txt': 'top\n',
      },
      { client: own },
    )
    expect(await workspace.stat(p('src/deep'))).toMatchObject({ kind: 'directory', size: 0 })
    await workspace.mkdir(p('empty/one'))
    expect(await rawKeys(client, BUCKET, prefix + 'empty')).toEqual([prefix + 'empty/one/'])
    expect((await workspace.list(p('empty'))).entries).toEqual([{ name: 'one', kind: 'directory' }])
    expect((await workspace.list(p('empty/one'))).entries).toEqual([])
    await workspace.remove(p('empty/one'))
    // The parent stays, as an empty directory on disk would.
    expect(await workspace.stat(p('empty'))).toMatchObject({ kind: 'directory' })
    expect((await failure(() => workspace.remove(p('src')))).code).toBe('not_empty')
    expect((await failure(() => workspace.mkdir(p('top.txt/x')))).code).toBe('not_directory')

    // Directory rename: every key copied (s3rver cannot resolve a CopySource with "+", so that
    // one goes through the part-wise fallback), markers too, then the sources deleted.
    await workspace.mkdir(p('src/none'))
    await workspace.rename(p('src'), p('lib/src'))
    expect(await rawKeys(client, BUCKET, prefix + 'lib/')).toEqual(
      ['lib/src/a.ts', 'lib/src/deep/b+c.ts', 'lib/src/deep/é.ts', 'lib/src/none/'].map(
        (k) => prefix + k,
      ),
    )
    await workspace.mkdir(p('bare'))
    await workspace.rename(p('bare'), p('lib/bare'))
    expect(await rawKeys(client, BUCKET, prefix + 'lib/bare')).toEqual([prefix + 'lib/bare/'])
    expect((await workspace.list(p('lib/src'))).entries.map((e) => e.name)).toEqual([
      'a.ts',
      'deep',
      'none',
    ])
    expect(await rawBytes(client, BUCKET, prefix + 'lib/src/deep/b+c.ts')).toEqual(
      enc.encode('b\n'),
    )
    expect(await workspace.stat(p('src'))).toBeUndefined()
    expect((await failure(() => workspace.rename(p('lib'), p('lib/inner')))).code).toBe(
      'invalid_argument',
    )
    expect((await failure(() => workspace.rename(p('lib'), p('top.txt')))).code).toBe(
      'not_directory',
    )
    expect((await failure(() => workspace.rename(p('top.txt'), p('lib')))).code).toBe(
      'is_directory',
    )

    requests.reset()
    await workspace.remove(p('lib'), { recursive: true })
    expect(requests.count('DeleteObjectsCommand')).toBe(1)
    expect(await rawKeys(client, BUCKET, prefix + 'lib')).toEqual([])
    expect((await workspace.list(p(''))).entries.map((e) => e.name)).toEqual(['empty', 'top.txt'])
  })

  it('lists and removes trees across listing pages', async () => {
    const own = server.client()
    const requests = recordCommands(own)
    const files: Record<string, string> = {}
    for (let i = 0; i < 150; i++) files[`many/f${String(i).padStart(3, '0')}`] = `${i}`
    const { workspace } = await workspaceWith(files, { client: own, listPageSize: 40 })
    const names: string[] = []
    let after: string | undefined
    for (;;) {
      const page = await workspace.list(p('many'), { after, limit: 30 })
      names.push(...page.entries.map((e) => e.name))
      if (page.next === undefined) break
      after = page.next
    }
    expect(names).toEqual(Object.keys(files).map((k) => k.slice(5)))
    requests.reset()
    await workspace.remove(p('many'), { recursive: true })
    expect(requests.count('ListObjectsV2Command')).toBeGreaterThanOrEqual(4)
    expect(requests.count('DeleteObjectsCommand')).toBe(1)
    expect(await workspace.stat(p('many'))).toBeUndefined()
  })

  it('deletes in DeleteObjects batches of at most 1000 keys', async () => {
    const stored = Array.from({ length: 2500 }, (_, i) => `big/ws/tree/k${i}`)
    const batches: number[] = []
    const scripted = {
      config: {},
      destroy() {},
      async send(command: { input: Record<string, unknown>; constructor: { name: string } }) {
        const name = command.constructor.name
        if (name === 'HeadObjectCommand')
          throw Object.assign(new Error('NotFound'), {
            name: 'NotFound',
            $metadata: { httpStatusCode: 404 },
          })
        if (name === 'ListObjectsV2Command') {
          const from = Number(command.input.ContinuationToken ?? 0)
          const size = Number(command.input.MaxKeys ?? 1000)
          const page = stored.slice(from, from + size)
          return {
            Contents: page.map((Key) => ({ Key, Size: 0 })),
            IsTruncated: from + size < stored.length,
            NextContinuationToken: String(from + size),
            $metadata: { httpStatusCode: 200 },
          }
        }
        if (name === 'DeleteObjectsCommand') {
          batches.push((command.input.Delete as { Objects: unknown[] }).Objects.length)
          return { $metadata: { httpStatusCode: 200 } }
        }
        if (name === 'PutObjectCommand') return { ETag: '"m"', $metadata: { httpStatusCode: 200 } }
        throw new Error(`unexpected ${name}`)
      },
    } as unknown as S3Client
    const ws = s3Workspace({ bucket: BUCKET, prefix: 'big/ws/', client: scripted })
    await ws.remove(p('tree'), { recursive: true })
    expect(batches).toEqual([1000, 1000, 500])
  })
})

/** An in-memory ListObjectsV2 with S3's exact semantics: code point order, roll-ups, MaxKeys. */
function fakeListing(keys: string[], pageSize: number) {
  const sorted = [...new Set(keys)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
  const requests: { token?: string; startAfter?: string }[] = []
  const page = async (
    base: string,
    request: { token?: string; startAfter?: string },
  ): Promise<RawPage> => {
    requests.push(request)
    const from = request.token ?? request.startAfter ?? ''
    const items: { key: string; isPrefix: boolean }[] = []
    for (const key of sorted) {
      if (!key.startsWith(base) || Buffer.compare(Buffer.from(key), Buffer.from(from)) <= 0)
        continue
      const slash = key.indexOf('/', base.length)
      const item =
        slash < 0 ? { key, isPrefix: false } : { key: key.slice(0, slash + 1), isPrefix: true }
      const last = items[items.length - 1]
      if (last?.key === item.key) continue
      if (Buffer.compare(Buffer.from(item.key), Buffer.from(from)) <= 0) continue
      items.push(item)
    }
    const taken = items.slice(0, pageSize)
    const truncated = items.length > pageSize
    const lastItem = taken[taken.length - 1]
    return {
      objects: taken.filter((i) => !i.isPrefix).map((i) => ({ key: i.key, size: 1 })),
      prefixes: taken.filter((i) => i.isPrefix).map((i) => i.key),
      // A token that resumes after the last item (past everything under a rolled-up prefix).
      ...(truncated && lastItem
        ? { next: lastItem.isPrefix ? lastItem.key + '\u{10FFFF}' : lastItem.key }
        : {}),
    }
  }
  const exists = async (prefix: string) => sorted.some((k) => k.startsWith(prefix))
  return { page, exists, requests }
}

describe('s3 workspace: listing order and paging', () => {
  // Names where S3's order (code points, directories rolled up as "name/") differs from the
  // port's (UTF-16 code units, directories by name): "src" sorts before "src.ts" by name but its
  // key "src/" comes after "src.ts"; U+FFFD sorts before an emoji by code point, after it in UTF-16.
  const keys = [
    'd/src.ts',
    'd/src-old/x',
    'd/src/index.ts',
    'd/src/lib/y',
    'd/a',
    'd/a.b.c',
    'd/a.b/inner',
    'd/a/inner',
    'd/\uFFFD.txt',
    'd/😀.txt',
    'd/z',
    ...Array.from({ length: 30 }, (_, i) => `d/test-${String(i).padStart(2, '0')}`),
    'd/test/inner',
    'd/',
  ]
  const names = [
    ...new Set(keys.map((k) => k.slice(2).split('/')[0]!).filter((n) => n !== '')),
  ].sort()

  it.each([1, 2, 3, 7, 50])('pages exactly with limit %i', async (limit) => {
    for (const pageSize of [1, 4, 1000]) {
      const fake = fakeListing(keys, pageSize)
      const got: string[] = []
      let after: string | undefined
      for (let guard = 0; guard < 100; guard++) {
        const { page } = await listDirectory(
          { page: (r) => fake.page('d/', r), exists: fake.exists },
          'd/',
          { after, limit },
        )
        got.push(...page.entries.map((e) => e.name))
        if (page.next === undefined) break
        after = page.next
      }
      expect(got, `limit ${limit}, page size ${pageSize}`).toEqual(names)
    }
  })

  it('stops reading pages once a page is provably complete', async () => {
    const fake = fakeListing(
      Array.from({ length: 500 }, (_, i) => `big/f${String(i).padStart(3, '0')}`),
      10,
    )
    const { page } = await listDirectory(
      { page: (r) => fake.page('big/', r), exists: fake.exists },
      'big/',
      { limit: 15 },
    )
    expect(page.entries.map((e) => e.name)).toEqual(
      Array.from({ length: 15 }, (_, i) => `f${String(i).padStart(3, '0')}`),
    )
    expect(page.next).toBe('f014')
    expect(fake.requests.length).toBe(2)
    const next = await listDirectory(
      { page: (r) => fake.page('big/', r), exists: fake.exists },
      'big/',
      { after: 'f014', limit: 15 },
    )
    expect(next.page.entries[0]!.name).toBe('f015')
    expect(fake.requests[2]).toEqual({ startAfter: 'big/f014' })
  })
})

describe('s3 workspace: conditional writes', () => {
  let proxy: Awaited<ReturnType<typeof startConditionalProxy>>
  beforeAll(async () => {
    proxy = await startConditionalProxy(server.endpoint, client)
  })
  afterEach(() => proxy.hold(0))
  afterAll(async () => {
    await proxy?.close()
  })
  const viaProxy = (overrides: S3ClientConfig = {}) => {
    const c = new S3Client(s3rverConfig(proxy.endpoint, { maxAttempts: 1, ...overrides }))
    cleanups.push(() => c.destroy())
    return c
  }

  it("detects under 'auto' whether the store enforces conditions, and cleans up its probe", async () => {
    const direct = await workspaceWith({ 'v.txt': 'one' })
    expect(direct.workspace.capabilities.conditionalWrite).toBe(false)
    expect(await direct.workspace.conditionalWritesEnforced()).toBe(false) // s3rver ignores them
    expect(direct.workspace.capabilities.conditionalWrite).toBe(false)
    const proxied = await workspaceWith({ 'v.txt': 'one' }, { client: viaProxy() })
    expect(await proxied.workspace.conditionalWritesEnforced()).toBe(true)
    expect(proxied.workspace.capabilities.conditionalWrite).toBe(true)
    for (const { prefix } of [direct, proxied])
      expect(await rawKeys(client, BUCKET, prefix)).toEqual([prefix + 'v.txt'])
    expect(
      s3Workspace({ bucket: BUCKET, client, conditionalWrites: true }).capabilities
        .conditionalWrite,
    ).toBe(true)
  })

  it('one workspace serialises its own writes: two edits from one version, one conflict', async () => {
    const { workspace } = await workspaceWith({ 'v.txt': 'base\n' }, { conditionalWrites: false })
    const version = (await workspace.stat(p('v.txt')))!.version
    const results = await Promise.allSettled([
      workspace.write(p('v.txt'), enc.encode('first\n'), { precondition: { ifVersion: version } }),
      workspace.write(p('v.txt'), enc.encode('second\n'), { precondition: { ifVersion: version } }),
    ])
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected'])
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
    expect(rejected.reason).toMatchObject({
      code: 'version_conflict',
      data: { path: 'v.txt', expected: version },
    })
    expect(dec(await workspace.read(p('v.txt')))).toBe('first\n')
  })

  it('two writers (two processes) racing on one object: the store lets exactly one win', async () => {
    const prefix = freshPrefix('unit/')
    await seed(client, BUCKET, prefix, { 'shared.txt': 'base\n' })
    const make = () =>
      s3Workspace({ bucket: BUCKET, prefix, client: viaProxy(), conditionalWrites: true })
    const [a, b] = [make(), make()]
    const version = (await a.stat(p('shared.txt')))!.version
    proxy.hold(5000) // the first conditional PUT waits for its competitor
    const results = await Promise.allSettled([
      a.write(p('shared.txt'), enc.encode('from a\n'), { precondition: { ifVersion: version } }),
      b.write(p('shared.txt'), enc.encode('from b\n'), { precondition: { ifVersion: version } }),
    ])
    proxy.hold(0)
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected'])
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
    expect(rejected.reason).toBeInstanceOf(IsoagentError)
    expect(rejected.reason).toMatchObject({
      code: 'version_conflict',
      data: { path: 'shared.txt', expected: version },
    })
    const winner = results[0]!.status === 'fulfilled' ? 'from a\n' : 'from b\n'
    expect(dec((await rawBytes(client, BUCKET, prefix + 'shared.txt'))!)).toBe(winner)
    expect(proxy.stats.conflicts).toBeGreaterThanOrEqual(1) // the 409 ConditionalRequestConflict path

    // A stale version later: 412 PreconditionFailed → version_conflict with the actual version.
    const stale = await failure(() =>
      b.write(p('shared.txt'), enc.encode('stale\n'), { precondition: { ifVersion: version } }),
    )
    expect(stale).toMatchObject({ code: 'version_conflict' })
    expect(stale.data.actual).toBe((await a.stat(p('shared.txt')))!.version)

    // ifAbsent races the same way.
    proxy.hold(5000)
    const creates = await Promise.allSettled([
      a.write(p('new.txt'), enc.encode('a'), { precondition: { ifAbsent: true } }),
      b.write(p('new.txt'), enc.encode('b'), { precondition: { ifAbsent: true } }),
    ])
    expect(creates.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected'])
  })

  it('two edit sessions on two workspaces: one edit lands, the other is a typed version_conflict', async () => {
    const prefix = freshPrefix('unit/')
    await seed(client, BUCKET, prefix, { 'doc.txt': 'alpha\nbeta\n' })
    const workspaces = [0, 1].map(() => s3Workspace({ bucket: BUCKET, prefix, client: viaProxy() }))
    // 'auto' probes once per workspace; let that happen before the race.
    for (const w of workspaces) expect(await w.conditionalWritesEnforced()).toBe(true)
    const sessions = await Promise.all(workspaces.map((w) => Agent.create().session(w)))
    for (const s of sessions) cleanups.push(() => s.close())
    proxy.hold(5000)
    const [one, two] = await Promise.all([
      sessions[0]!.editFile('doc.txt', 'alpha', 'ALPHA'),
      sessions[1]!.editFile('doc.txt', 'beta', 'BETA'),
    ])
    const outcomes = [one!, two!].map((r) => r.errorKind?.type ?? 'ok').sort()
    expect(outcomes).toEqual(['ok', 'version_conflict'])
    const text = dec((await rawBytes(client, BUCKET, prefix + 'doc.txt'))!)
    expect(['ALPHA\nbeta\n', 'alpha\nBETA\n']).toContain(text)
  })

  it('without store enforcement, two processes can both win: the documented race window', async () => {
    const prefix = freshPrefix('unit/')
    await seed(client, BUCKET, prefix, { 'shared.txt': 'base\n' })
    const shared = server.client()
    barrier(shared, 'PutObjectCommand', 2)
    const make = () =>
      s3Workspace({ bucket: BUCKET, prefix, client: shared, conditionalWrites: false })
    const [a, b] = [make(), make()]
    const version = (await a.stat(p('shared.txt')))!.version
    // Both check the version (HEAD) before either writes; nothing on the store stops the second.
    const results = await Promise.allSettled([
      a.write(p('shared.txt'), enc.encode('from a\n'), { precondition: { ifVersion: version } }),
      b.write(p('shared.txt'), enc.encode('from b\n'), { precondition: { ifVersion: version } }),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled'])
    // The best-effort check still refuses what it can see.
    await expect(
      a.write(p('shared.txt'), enc.encode('stale\n'), { precondition: { ifVersion: version } }),
    ).rejects.toMatchObject({ code: 'version_conflict' })
  })
})

describe('s3 workspace: typed failures', () => {
  let fake: LocalServer | undefined
  afterEach(async () => {
    await fake?.close()
    fake = undefined
  })
  const fakeWorkspace = (endpoint: string, options: Partial<S3WorkspaceOptions> = {}) => {
    const c = new S3Client(s3rverConfig(endpoint, { maxAttempts: 1 }))
    cleanups.push(() => c.destroy())
    return s3Workspace({ bucket: BUCKET, prefix: 'ws/', client: c, ...options })
  }

  it('a missing bucket is not_found, and says which bucket', async () => {
    const ws = s3Workspace({ bucket: 'no-such-bucket', prefix: 'x/', client })
    for (const run of [
      () => ws.read(p('a.txt')),
      () => ws.list(p('')),
      () => ws.stat(p('a.txt')),
      () => ws.write(p('a.txt'), enc.encode('x')),
    ]) {
      const error = await failure(run)
      expect(error.code).toBe('not_found')
      expect(error.message).toBe(
        'S3 bucket "no-such-bucket" does not exist (or is not visible with these credentials)',
      )
      expect(error.data).toMatchObject({ bucket: 'no-such-bucket', s3_code: 'NoSuchBucket' })
    }
    const session = await Agent.create().session(ws)
    cleanups.push(() => session.close())
    const r = await session.tool('ls', {})
    expect(r.errorKind).toEqual({ type: 'not_found' })
    expect(r.output).toContain('no-such-bucket')
  })

  it('wrong credentials are permission_denied (s3rver checks the key id, not V4 signatures)', async () => {
    const stranger = server.client({
      credentials: { accessKeyId: 'NOT-A-KEY', secretAccessKey: 'nope' },
      maxAttempts: 1,
    })
    const { workspace: seeded, prefix } = await workspaceWith({ 'a.txt': 'a\n' })
    const ws = s3Workspace({ bucket: BUCKET, prefix, client: stranger })
    for (const run of [
      () => ws.read(p('a.txt')),
      () => ws.list(p('')),
      () => ws.stat(p('a.txt')),
      () => ws.write(p('b.txt'), enc.encode('x')),
    ]) {
      const error = await failure(run)
      expect(error.code).toBe('permission_denied')
      expect(error.message).toMatch(
        /^S3 refused (read|list|stat|write) of .+ \((InvalidAccessKeyId|Forbidden)\): check the credentials and the bucket policy$/,
      )
    }
    // s3rver does not verify V4 signatures: a right key id with a wrong secret is let in.
    const wrongSecret = server.client({
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'wrong' },
    })
    const lax = s3Workspace({ bucket: BUCKET, prefix, client: wrongSecret })
    expect(await lax.read(p('a.txt'))).toEqual(await seeded.read(p('a.txt')))
    // A store that does verify them answers SignatureDoesNotMatch: also permission_denied.
    fake = await listen((_req, res) => s3ErrorResponse(res, 403, 'SignatureDoesNotMatch'))
    const signed = fakeWorkspace(fake.endpoint)
    const error = await failure(() => signed.read(p('a.txt')))
    expect(error).toMatchObject({
      code: 'permission_denied',
      data: { s3_code: 'SignatureDoesNotMatch' },
    })
  })

  it('a response that ends early is an io error, for reads and streams', async () => {
    fake = await listen((req, res) => {
      const range = /bytes=(\d+)-(\d+)?/.exec(req.headers.range ?? '')
      const start = Number(range?.[1] ?? 0)
      const end = range?.[2] === undefined ? 999 : Number(range[2])
      const length = end - start + 1
      if (req.url?.includes('chunked')) {
        // No Content-Length: only Content-Range says how much should come; the body ends short.
        res.writeHead(206, { 'content-range': `bytes ${start}-${end}/1000`, etag: '"e"' })
        res.end(Buffer.alloc(10, 0x61))
        return
      }
      res.writeHead(range ? 206 : 200, {
        'content-length': length,
        ...(range ? { 'content-range': `bytes ${start}-${end}/1000` } : {}),
        etag: '"e"',
      })
      res.write(Buffer.alloc(10, 0x61))
      setTimeout(() => res.socket?.destroy(), 20)
    })
    const ws = fakeWorkspace(fake.endpoint)
    const cut = await failure(() => ws.read(p('cut.bin'), { offset: 0, length: 100 }))
    expect(cut.code).toBe('io')
    expect(cut.data).toMatchObject({ op: 'read', path: 'cut.bin' })
    expectHumanMessage(cut)
    const streamed = await failure(async () => collect(await ws.readStream(p('cut.bin'))))
    expect(streamed.code).toBe('io')
    const chunked = await failure(() => ws.read(p('chunked.bin'), { offset: 0, length: 100 }))
    expect(chunked).toMatchObject({ code: 'io', data: { received_bytes: 10, expected_bytes: 100 } })
    expect(chunked.message).toBe(
      'S3 read of chunked.bin failed: the response ended after 10 of 100 bytes',
    )
    // Through a session the same failure is a typed transport result, never a throw.
    const session = await Agent.create().session(ws)
    cleanups.push(() => session.close())
    const r = await session.tool('search', { mode: 'bm25', query: 'anything', path: 'cut.bin' })
    expect(r.exitCode).toBe(1)
  })

  it('throttling is io with retry_after_ms; refused connections are io with the operation', async () => {
    fake = await listen((req, res) => s3ErrorResponse(res, 503, 'SlowDown', { 'retry-after': '3' }))
    const slow = fakeWorkspace(fake.endpoint)
    const throttled = await failure(() => slow.read(p('a.txt')))
    expect(throttled).toMatchObject({
      code: 'io',
      data: { op: 'read', s3_code: 'SlowDown', retryable: true, retry_after_ms: 3000 },
    })
    expect(throttled.message).toBe(
      'S3 is throttling requests (SlowDown) during read of a.txt; retry in 3 s',
    )
    const endpoint = fake.endpoint
    await fake.close()
    fake = undefined
    const gone = fakeWorkspace(endpoint)
    const refused = await failure(() => gone.read(p('a.txt')))
    expect(refused).toMatchObject({
      code: 'io',
      data: { op: 'read', network_error: 'ECONNREFUSED' },
    })
    expectHumanMessage(refused)
    const listed = await failure(() => gone.list(p('')))
    expect(listed).toMatchObject({ code: 'io', data: { op: 'list' } })
  })

  it('a cancelled request is cancelled', async () => {
    const { workspace } = await workspaceWith({ 'a.txt': 'a' })
    const controller = new AbortController()
    controller.abort()
    expect((await failure(() => workspace.list(p(''), { signal: controller.signal }))).code).toBe(
      'cancelled',
    )
    expect(
      (
        await failure(() =>
          workspace.write(p('b.txt'), enc.encode('b'), { signal: controller.signal }),
        )
      ).code,
    ).toBe('cancelled')
  })
})

describe('s3 workspace: sessions', () => {
  it('offers the file tools and search, never bash, git or download', async () => {
    const { workspace } = await workspaceWith()
    expect(workspace.capabilities).toMatchObject({
      read: true,
      write: true,
      exec: false,
      git: false,
      search: true,
      atomicRename: true,
      symlinks: false,
    })
    expect(workspace.capabilities.localRoot).toBeUndefined()
    const session = await Agent.create().session(workspace)
    cleanups.push(() => session.close())
    const names = session.toolNames()
    expect(names).toEqual(
      expect.arrayContaining(['read', 'write', 'edit', 'patch', 'ls', 'search']),
    )
    for (const absent of ['bash', 'git', 'download']) expect(names).not.toContain(absent)
    expect((await session.tool('bash', { command: 'ls' })).errorKind?.type).toBe('unsupported')
  })

  it('searches the bucket through the port: grep, glob, bm25, ignore files', async () => {
    const { workspace } = await workspaceWith({
      'src/app.ts': 'export function handleRequest() {\n  return 1\n}\n',
      'src/util.ts': '// TODO: handle errors\nexport const util = 2\n',
      'docs/guide.md': '# Guide\nTODO write more\n',
      'build/out.js': 'TODO built\n',
      '.gitignore': 'build/\n',
      '.hidden/x.ts': 'TODO hidden\n',
      'bin/blob.bin': new Uint8Array([0x54, 0x4f, 0x44, 0x4f, 0, 1]),
    })
    const session = await Agent.create().session(workspace)
    cleanups.push(() => session.close())
    expect(await session.grep('TODO', { output_mode: 'files_with_matches' })).toBe(
      'docs/guide.md\nsrc/util.ts',
    )
    expect(await session.grep('handle\\w+')).toBe('src/app.ts:1:export function handleRequest() {')
    expect(await session.glob('*.ts')).toEqual(['src/app.ts', 'src/util.ts'])
    expect(await session.glob('**/*.{md,js}')).toEqual(['docs/guide.md'])
    const bm25 = await session.tool('search', { mode: 'bm25', query: 'handle request' })
    expect(bm25.exitCode, bm25.output).toBe(0)
    expect(bm25.output).toContain('src/app.ts')
  })

  it('snapshots the bucket and prefix, and resumes on them', async () => {
    const { workspace, prefix } = await workspaceWith({ 'a.txt': 'resumed\n' })
    const session = await Agent.create().session(workspace)
    cleanups.push(() => session.close())
    const snapshot = session.snapshot()
    expect(snapshot.workspace).toEqual({ kind: 's3', bucket: BUCKET, prefix })
    // The resolver builds its own client from the environment, as `new S3Client({})` would.
    const saved = { ...process.env }
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_S3: server.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
      AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    })
    cleanups.push(() => {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key]
      Object.assign(process.env, saved)
    })
    const resumed = await Agent.create().resumeSession(snapshot)
    cleanups.push(() => resumed.close())
    expect(resumed.snapshot().workspace).toEqual(snapshot.workspace)
    expect(await resumed.readFile('a.txt')).toBe('     1\tresumed')
  })
})

describe('s3 workspace: the port against a raw client', () => {
  it('ranged GETs and listings match what the SDK sees directly', async () => {
    const { workspace, prefix } = await workspaceWith({
      'x/a.txt': 'hello world',
      'x/b/c.txt': 'c',
    })
    const direct = await client.send(
      new GetObjectCommand({ Bucket: BUCKET, Key: prefix + 'x/a.txt', Range: 'bytes=6-10' }),
    )
    expect(await workspace.read(p('x/a.txt'), { offset: 6, length: 5 })).toEqual(
      new Uint8Array(await direct.Body!.transformToByteArray()),
    )
    const listed = await client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix + 'x/', Delimiter: '/' }),
    )
    expect((await workspace.list(p('x'))).entries.map((e) => e.name).sort()).toEqual(
      [
        ...(listed.Contents ?? []).map((c) => c.Key!.slice(prefix.length + 2)),
        ...(listed.CommonPrefixes ?? []).map((c) => c.Prefix!.slice(prefix.length + 2, -1)),
      ].sort(),
    )
    // A version is the ETag the store reports, so it works as an If-Match precondition.
    await client.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: prefix + 'x/a.txt',
        Body: enc.encode('changed'),
      }),
    )
    const stat = (await workspace.stat(p('x/a.txt')))!
    expect(stat.version).toBe(createHash('md5').update('changed').digest('hex'))
  })
})
