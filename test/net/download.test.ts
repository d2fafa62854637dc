import { createHash } from 'node:crypto'
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace, type Session, type SessionEvent } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import { rangeServing, seededBytes, startServer, type TestServer } from './http-fixture.ts'

const MiB = 1024 * 1024
let server: TestServer
let root: string
let session: Session

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

/** Every file under root, recursively (relative paths). */
function tree(dir = root, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tree(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  )
}

function expectNoTemp(): void {
  expect(tree().filter((f) => f.includes('isoagent-download'))).toEqual([])
}

beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())
beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'isoagent-download-'))
  session = await Agent.create().session(localWorkspace(root), {
    net: { allowHosts: ['127.0.0.1'] },
  })
})
afterEach(async () => {
  await session.close()
  rmSync(root, { recursive: true, force: true })
})

describe('download: strategies', () => {
  it('streams a server without ranges sequentially', async () => {
    const body = seededBytes(3 * MiB + 17, 3)
    server.route('/plain.bin', (_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/x-thing',
        'content-length': String(body.length),
      })
      res.end(body)
    })
    const r = await session.tool('download', {
      url: server.url('/plain.bin'),
      file_path: 'out/plain.bin',
    })
    expect(r.errorKind).toBeUndefined()
    expect(readFileSync(join(root, 'out/plain.bin')).equals(body)).toBe(true)
    expect(r.metadata).toMatchObject({
      file_path: 'out/plain.bin',
      bytes: body.length,
      content_type: 'application/x-thing',
      strategy: 'sequential',
      connections: 1,
      range_supported: false,
      overwritten: false,
      sha256: sha(body),
      address_check: 'resolved',
    })
    expect(r.metadata?.source_anchors).toEqual([
      { path: 'out/plain.bin', url: server.url('/plain.bin'), sha256: sha(body) },
    ])
    expectNoTemp()
  })

  it('uses 4 parallel ranges with a strong ETag sent as If-Range', async () => {
    const body = seededBytes(12 * MiB + 5, 4)
    const seen: string[] = []
    const serve = rangeServing(body, { etag: '"v1"' })
    server.route('/par.bin', (req, res, hit) => {
      seen.push(`${req.headers.range ?? ''}|${req.headers['if-range'] ?? ''}`)
      return serve(req, res, hit)
    })
    const r = await session.tool('download', { url: server.url('/par.bin'), file_path: 'par.bin' })
    expect(r.errorKind).toBeUndefined()
    expect(r.metadata).toMatchObject({
      strategy: 'parallel_range',
      connections: 4,
      range_supported: true,
      sha256: sha(body),
    })
    expect(readFileSync(join(root, 'par.bin')).equals(body)).toBe(true)
    expect(seen[0]).toBe('bytes=0-0|')
    expect(seen.slice(1).sort()).toHaveLength(4)
    for (const s of seen.slice(1)) expect(s).toMatch(/^bytes=\d+-\d+\|"v1"$/)
    expectNoTemp()
  })

  it('stays sequential with a weak ETag, or a file below two chunks', async () => {
    const body = seededBytes(6 * MiB, 5)
    server.route('/weak.bin', rangeServing(body, { etag: 'W/"weak"' }))
    const r = await session.tool('download', {
      url: server.url('/weak.bin'),
      file_path: 'weak.bin',
    })
    expect(r.metadata).toMatchObject({
      strategy: 'sequential',
      range_supported: true,
      sha256: sha(body),
    })
    const small = seededBytes(3 * MiB, 6)
    server.route('/small.bin', rangeServing(small, { etag: '"s"' }))
    const s = await session.tool('download', {
      url: server.url('/small.bin'),
      file_path: 'small.bin',
    })
    expect(s.metadata).toMatchObject({ strategy: 'sequential', sha256: sha(small) })
    const one = await session.tool('download', {
      url: server.url('/weak.bin'),
      file_path: 'one.bin',
      connections: 1,
    })
    expect(one.metadata).toMatchObject({ strategy: 'sequential' })
  })

  it('falls back to one sequential response when ranges come back whole', async () => {
    const body = seededBytes(8 * MiB, 7)
    server.route('/fallback.bin', (req, res) => {
      if (req.headers.range === 'bytes=0-0') {
        res.writeHead(206, {
          etag: '"f"',
          'content-range': `bytes 0-0/${body.length}`,
          'content-length': '1',
        })
        res.end(body.subarray(0, 1))
        return
      }
      res.writeHead(200, { etag: '"f"', 'content-length': String(body.length) })
      res.end(body)
    })
    const r = await session.tool('download', {
      url: server.url('/fallback.bin'),
      file_path: 'f.bin',
    })
    expect(r.errorKind).toBeUndefined()
    expect(r.metadata).toMatchObject({
      strategy: 'sequential_fallback',
      sha256: sha(body),
      bytes: body.length,
    })
    expectNoTemp()
  })

  it('infers a sanitised name from Content-Disposition, else from the URL', async () => {
    const body = seededBytes(1000, 8)
    server.route('/cd', (_req, res) => {
      res.writeHead(200, {
        'content-disposition': 'attachment; filename="../../etc/evil:name.bin"',
      })
      res.end(body)
    })
    server.route('/files/report%20v2.pdf', (_req, res) => res.end(body))
    const a = await session.tool('download', { url: server.url('/cd'), file_path: 'dl/' })
    expect(a.metadata?.file_path).toBe('dl/evil_name.bin')
    const b = await session.tool('download', {
      url: server.url('/files/report%20v2.pdf?sig=1'),
      file_path: './',
    })
    expect(b.metadata?.file_path).toBe('report v2.pdf')
    const star = 'attachment; filename="fallback.txt"; filename*=UTF-8\'\'na%C3%AFve.txt'
    server.route('/star', (_req, res) => {
      res.writeHead(200, { 'content-disposition': star })
      res.end(body)
    })
    const c = await session.tool('download', { url: server.url('/star'), file_path: 'dl/' })
    expect(c.metadata?.file_path).toBe('dl/naïve.txt')
  })

  it('keeps signed query strings out of metadata and events', async () => {
    server.route('/signed.bin', (_req, res) => res.end('data'))
    const events: SessionEvent[] = []
    const stream = session.events()[Symbol.asyncIterator]()
    const pump = (async () => {
      for (;;) {
        const next = await stream.next()
        if (next.done) return
        events.push(next.value)
        if (next.value.type === 'tool_end') return
      }
    })()
    const r = await session.tool('download', {
      url: server.url('/signed.bin?X-Amz-Signature=topsecret123&X-Amz-Credential=AKIDEXAMPLE'),
      file_path: 'signed.bin',
    })
    await pump
    expect(r.exitCode).toBe(0)
    const shown = JSON.stringify([r.metadata, r.output, events])
    expect(shown).not.toContain('topsecret123')
    expect(shown).not.toContain('AKIDEXAMPLE')
    expect(shown).toContain('X-Amz-Signature=REDACTED')
  })

  it('reports progress as tool_output_delta events at most every 250 ms', async () => {
    const body = seededBytes(2 * MiB, 9)
    server.route('/slow.bin', async (_req, res) => {
      res.writeHead(200, { 'content-length': String(body.length) })
      for (let i = 0; i < 16; i++) {
        res.write(body.subarray(i * 128 * 1024, (i + 1) * 128 * 1024))
        await new Promise((r) => setTimeout(r, 80))
      }
      res.end()
    })
    const deltas: {
      at: number
      value: { bytes: number; total: number; rate_bytes_per_s: number }
    }[] = []
    const stream = session.events()[Symbol.asyncIterator]()
    const pump = (async () => {
      for (;;) {
        const next = await stream.next()
        if (next.done) return
        const e = next.value
        if (e.type === 'tool_output_delta')
          deltas.push({ at: e.timestamp, value: JSON.parse(e.delta) })
        if (e.type === 'tool_end') return
      }
    })()
    const r = await session.tool('download', {
      url: server.url('/slow.bin'),
      file_path: 'slow.bin',
    })
    await pump
    expect(r.exitCode).toBe(0)
    expect(deltas.length).toBeGreaterThanOrEqual(3)
    for (let i = 1; i < deltas.length; i++)
      expect(deltas[i]!.at - deltas[i - 1]!.at).toBeGreaterThanOrEqual(245)
    for (const d of deltas) {
      expect(d.value.total).toBe(body.length)
      expect(d.value.bytes).toBeGreaterThan(0)
      expect(d.value.rate_bytes_per_s).toBeGreaterThan(0)
    }
  })

  it('is registered only on workspaces with a writable local root', async () => {
    expect(session.toolNames()).toContain('download')
    const memory = await Agent.create().session(memoryWorkspace())
    expect(memory.toolNames()).not.toContain('download')
    const r = await memory.tool('download', { url: server.url('/x'), file_path: 'x' })
    expect(r.exitCode).toBe(1)
    await memory.close()
  })
})

describe('download: faults leave the target unchanged and no temp file', () => {
  const cases: {
    name: string
    route: Parameters<TestServer['route']>[1]
    args?: Record<string, unknown>
    kind: string
    existing?: string
  }[] = [
    {
      name: 'truncated body',
      route: (_req, res) => {
        res.writeHead(200, { 'content-length': '100000' })
        res.write(new Uint8Array(50_000))
        setTimeout(() => res.destroy(), 20)
      },
      kind: 'transport',
    },
    {
      name: 'lying Content-Range on the probe',
      route: (_req, res) => {
        res.writeHead(206, { 'content-range': 'bytes 0-99/50', 'content-length': '1' })
        res.end('x')
      },
      kind: 'transport',
    },
    {
      name: 'lying Content-Range on a range',
      route: (() => {
        const body = seededBytes(8 * MiB, 10)
        return (
          req: import('node:http').IncomingMessage,
          res: import('node:http').ServerResponse,
        ) => {
          if (req.headers.range === 'bytes=0-0') {
            res.writeHead(206, {
              etag: '"l"',
              'content-range': `bytes 0-0/${body.length}`,
              'content-length': '1',
            })
            res.end(body.subarray(0, 1))
            return
          }
          res.writeHead(206, {
            etag: '"l"',
            'content-range': `bytes 0-1023/${body.length}`,
            'content-length': '1024',
          })
          res.end(body.subarray(0, 1024))
        }
      })(),
      kind: 'transport',
    },
    {
      name: 'validator changing mid-download',
      route: (() => {
        const body = seededBytes(8 * MiB, 11)
        let n = 0
        return (
          req: import('node:http').IncomingMessage,
          res: import('node:http').ServerResponse,
        ) => {
          n++
          const etag = n <= 2 ? '"a"' : '"b"'
          const m = /bytes=(\d+)-(\d+)/.exec(String(req.headers.range))!
          const first = Number(m[1])
          const last = Number(m[2])
          res.writeHead(206, {
            etag,
            'content-range': `bytes ${first}-${last}/${body.length}`,
            'content-length': String(last - first + 1),
          })
          res.end(body.subarray(first, last + 1))
        }
      })(),
      kind: 'transport',
    },
    {
      name: 'If-Range no longer matching (whole new body)',
      route: (() => {
        const body = seededBytes(8 * MiB, 12)
        return (
          req: import('node:http').IncomingMessage,
          res: import('node:http').ServerResponse,
        ) => {
          if (req.headers.range === 'bytes=0-0') {
            res.writeHead(206, {
              etag: '"old"',
              'content-range': `bytes 0-0/${body.length}`,
              'content-length': '1',
            })
            res.end(body.subarray(0, 1))
            return
          }
          res.writeHead(200, { etag: '"new"', 'content-length': String(body.length) })
          res.end(body)
        }
      })(),
      kind: 'transport',
    },
    {
      name: 'max_bytes exceeded (declared)',
      route: (_req, res) => {
        res.writeHead(200, { 'content-length': '5000' })
        res.end(new Uint8Array(5000))
      },
      args: { max_bytes: 1000 },
      kind: 'invalid_argument',
    },
    {
      name: 'max_bytes exceeded (streamed)',
      route: (_req, res) => {
        res.writeHead(200, { 'transfer-encoding': 'chunked' })
        for (let i = 0; i < 5; i++) res.write(new Uint8Array(1000))
        res.end()
      },
      args: { max_bytes: 2500 },
      kind: 'invalid_argument',
    },
    {
      name: 'hash mismatch',
      route: (_req, res) => res.end('content'),
      args: { expected_sha256: 'a'.repeat(64) },
      kind: 'version_conflict',
    },
    {
      name: '503 four times',
      route: (_req, res) => {
        res.writeHead(503, { 'retry-after': '0' })
        res.end()
      },
      kind: 'transport',
    },
    {
      name: '429 with Retry-After beyond 30 s',
      route: (_req, res) => {
        res.writeHead(429, { 'retry-after': '120' })
        res.end()
      },
      kind: 'rate_limited',
    },
    {
      name: 'timeout',
      route: (_req, res) => {
        res.writeHead(200, { 'content-length': '1000' })
        res.write(new Uint8Array(10))
      },
      args: { timeout: 0.5 },
      kind: 'timeout',
    },
    {
      name: 'target exists without overwrite',
      route: (_req, res) => res.end('new'),
      existing: 'old',
      kind: 'invalid_argument',
    },
  ]
  for (const [i, c] of cases.entries()) {
    it(c.name, async () => {
      server.route(`/fault${i}`, c.route)
      if (c.existing !== undefined) writeFileSync(join(root, 'target.bin'), c.existing)
      const r = await session.tool('download', {
        url: server.url(`/fault${i}`),
        file_path: 'target.bin',
        ...c.args,
      })
      expect(r.exitCode).toBe(1)
      expect(r.errorKind?.type).toBe(c.kind)
      if (c.existing === undefined) expect(tree()).toEqual([])
      else expect(readFileSync(join(root, 'target.bin'), 'utf8')).toBe(c.existing)
      expectNoTemp()
    })
  }

  it('503 four times is one request and three retries', async () => {
    server.route('/always503', (_req, res) => {
      res.writeHead(503, { 'retry-after': '0' })
      res.end()
    })
    await session.tool('download', { url: server.url('/always503'), file_path: 't.bin' })
    expect(server.hits('/always503')).toBe(4)
  })

  it('429 then success honours Retry-After', async () => {
    server.route('/limited', (_req, res, hit) => {
      if (hit === 1) {
        res.writeHead(429, { 'retry-after': '1' })
        res.end()
        return
      }
      res.end('finally')
    })
    const started = Date.now()
    const r = await session.tool('download', { url: server.url('/limited'), file_path: 'l.txt' })
    expect(r.errorKind).toBeUndefined()
    expect(Date.now() - started).toBeGreaterThanOrEqual(950)
    expect(r.metadata?.retries).toBe(1)
    expect(readFileSync(join(root, 'l.txt'), 'utf8')).toBe('finally')
  })

  it('abort', async () => {
    server.route('/abort', (_req, res) => {
      res.writeHead(200, { 'content-length': String(10 * MiB) })
      res.write(new Uint8Array(MiB))
    })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 300)
    const r = await session.tool(
      'download',
      { url: server.url('/abort'), file_path: 'a.bin' },
      { signal: controller.signal },
    )
    expect(r.exitCode).toBe(1)
    expect(r.errorKind?.type).toBe('cancelled')
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(tree()).toEqual([])
  })

  it('overwrite replaces an existing file', async () => {
    server.route('/new', (_req, res) => res.end('new content'))
    writeFileSync(join(root, 'o.txt'), 'old')
    const r = await session.tool('download', {
      url: server.url('/new'),
      file_path: 'o.txt',
      overwrite: true,
    })
    expect(r.metadata?.overwritten).toBe(true)
    expect(readFileSync(join(root, 'o.txt'), 'utf8')).toBe('new content')
    expectNoTemp()
  })

  it('a directory as target', async () => {
    server.route('/dir', (_req, res) => res.end('x'))
    mkdirSync(join(root, 'adir'))
    for (const overwrite of [false, true]) {
      const r = await session.tool('download', {
        url: server.url('/dir'),
        file_path: 'adir',
        overwrite,
      })
      expect(r.exitCode).toBe(1)
    }
    expect(tree()).toEqual([])
    expect(readdirSync(join(root, 'adir'))).toEqual([])
  })

  it('a path outside the workspace', async () => {
    server.route('/out', (_req, res) => res.end('x'))
    const outside = mkdtempSync(join(tmpdir(), 'isoagent-outside-'))
    try {
      symlinkSync(outside, join(root, 'link'))
      for (const file_path of ['../escape.bin', '/etc/escape.bin', 'link/escape.bin']) {
        const r = await session.tool('download', { url: server.url('/out'), file_path })
        expect(r.exitCode).toBe(1)
        expect(['permission_denied', 'invalid_argument']).toContain(r.errorKind?.type)
      }
      expect(readdirSync(outside)).toEqual([])
      expect(tree().filter((f) => !f.startsWith('link'))).toEqual([])
    } finally {
      rmSync(outside, { recursive: true, force: true })
    }
  })

  it('a URL that does not parse is invalid_argument, nothing written', async () => {
    for (const url of ['not a url', 'http://[::1', 'https://']) {
      const r = await session.tool('download', { url, file_path: 'bad.bin' })
      expect(r.exitCode).toBe(1)
      expect(r.errorKind?.type).toBe('invalid_argument')
    }
    expect(tree()).toEqual([])
  })

  it('a private address without allowHosts', async () => {
    const plain = await Agent.create().session(localWorkspace(root))
    const r = await plain.tool('download', { url: server.url('/new'), file_path: 'p.bin' })
    expect(r.errorKind?.type).toBe('permission_denied')
    await plain.close()
    expect(tree()).toEqual([])
  })
})
