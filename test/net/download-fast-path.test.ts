// The Node fast path of `download` (the transport's body piped into the temp file, SHA-256 on
// the hash worker past 16 MiB): bodies that break off resume exactly where they stopped, large
// parallel downloads hash right, a cancel leaves nothing behind.
import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Agent, type Session } from '../../adapters/index.ts'
import { localWorkspace, nodeHttpTransport } from '../../adapters/node/index.ts'
import { pipeToFile } from '../../adapters/node/body-to-file.ts'
import { claimNodeBody } from '../../adapters/node/node-body.ts'
import { WrittenPrefix } from '../../adapters/node/written-prefix.ts'
import { DOWNLOAD_LIMITS, splitRanges } from '../../src/tools/download/download.ts'
import {
  rangeServing,
  seededBytes,
  startServer,
  type Route,
  type TestServer,
} from './http-fixture.ts'

const MiB = 1024 * 1024
let server: TestServer
let root: string
let session: Session

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())
beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'isoagent-download-fast-'))
  session = await Agent.create().session(localWorkspace(root), {
    net: { allowHosts: ['127.0.0.1'] },
  })
})
afterEach(async () => {
  await session.close()
  rmSync(root, { recursive: true, force: true })
})

/**
 * `rangeServing(body)` with a strong ETag, except that the first request asking for byte
 * `from` onwards (a plain GET when `from` is 0) sends `cut` bytes and then closes.
 */
function breakingOnce(body: Uint8Array, from: number, cut: number, seen: string[]): Route {
  const serve = rangeServing(body, { etag: '"v"' })
  let broken = false
  return (req, res, hit) => {
    const range = String(req.headers.range ?? '')
    seen.push(range)
    const first = Number(/^bytes=(\d+)-/.exec(range)?.[1] ?? 0)
    if (broken || first !== from || range === 'bytes=0-0') return serve(req, res, hit)
    broken = true
    const last = range === '' ? body.length - 1 : Number(/-(\d+)$/.exec(range)![1])
    const head: Record<string, string> = {
      etag: '"v"',
      'content-length': String(last - first + 1),
    }
    if (range !== '') head['content-range'] = `bytes ${first}-${last}/${body.length}`
    res.writeHead(range === '' ? 200 : 206, head)
    res.write(body.subarray(first, first + cut), () => setTimeout(() => res.destroy(), 50))
  }
}

describe('download: Node fast path', () => {
  it('a sequential body that breaks off resumes at the very byte it stopped at', async () => {
    const body = seededBytes(24 * MiB + 7, 21)
    const cut = 20 * MiB + 12_345
    const seen: string[] = []
    server.route('/seq-break.bin', breakingOnce(body, 0, cut, seen))
    const r = await session.tool('download', {
      url: server.url('/seq-break.bin'),
      file_path: 'seq.bin',
      connections: 1,
    })
    expect(r.errorKind).toBeUndefined()
    expect(r.metadata).toMatchObject({ strategy: 'sequential', retries: 1, sha256: sha(body) })
    // Every byte received before the break was written, so the resume asks for the rest only.
    expect(seen).toEqual(['bytes=0-0', '', `bytes=${cut}-${body.length - 1}`])
    expect(readFileSync(join(root, 'seq.bin')).equals(body)).toBe(true)
  })

  it('a parallel range that breaks off resumes, and the 40 MiB file hashes right', async () => {
    const body = seededBytes(40 * MiB, 22)
    const quarter = 10 * MiB
    const cut = 3 * MiB + 999
    const seen: string[] = []
    server.route('/par-break.bin', breakingOnce(body, quarter, cut, seen))
    const r = await session.tool('download', {
      url: server.url('/par-break.bin'),
      file_path: 'par.bin',
    })
    expect(r.errorKind).toBeUndefined()
    expect(r.metadata).toMatchObject({
      strategy: 'parallel_range',
      connections: 4,
      retries: 1,
      sha256: sha(body),
    })
    expect(seen).toContain(`bytes=${quarter + cut}-${2 * quarter - 1}`)
    expect(readFileSync(join(root, 'par.bin')).equals(body)).toBe(true)
  })

  it('a cancel in the middle of a large download leaves no temp file', async () => {
    server.route('/slow-large.bin', (_req, res) => {
      res.writeHead(200, { 'content-length': String(200 * MiB) })
      res.write(seededBytes(40 * MiB, 23))
    })
    const controller = new AbortController()
    // Cancel once the temp file holds more than the hash worker's threshold.
    const poll = setInterval(() => {
      for (const name of readdirSync(root))
        if (statSync(join(root, name)).size > 20 * MiB) controller.abort()
    }, 20)
    const r = await session.tool(
      'download',
      { url: server.url('/slow-large.bin'), file_path: 'big.bin' },
      { signal: controller.signal },
    )
    clearInterval(poll)
    expect(controller.signal.aborted).toBe(true)
    expect(r.errorKind?.type).toBe('cancelled')
    expect(readdirSync(root)).toEqual([])
  })
})

describe('download: pieces of the fast path', () => {
  it('parallel ranges are cut in pieces of at most 32 MiB, in file order', () => {
    expect(splitRanges(12 * MiB + 5, 4)).toHaveLength(4)
    const total = 1024 * MiB + 3
    const pieces = splitRanges(total, 4)
    expect(pieces.length).toBe(33)
    expect(pieces[0]).toEqual([0, DOWNLOAD_LIMITS.maxChunkBytes - 1])
    for (let i = 1; i < pieces.length; i++) expect(pieces[i]![0]).toBe(pieces[i - 1]![1] + 1)
    expect(pieces.at(-1)![1]).toBe(total - 1)
  })

  it('the written prefix grows only over spans without a gap from byte 0', () => {
    const p = new WrittenPrefix()
    p.add(10, 20)
    expect(p.length).toBe(0)
    p.add(30, 40)
    p.add(0, 5)
    expect(p.length).toBe(5)
    p.add(5, 10)
    expect(p.length).toBe(20)
    p.add(20, 30)
    expect(p.length).toBe(40)
    p.add(35, 50)
    expect(p.length).toBe(50)
  })

  it('a body of the Node transport can be claimed once, and not after it was read', async () => {
    server.route('/claim', (_req, res) => res.end('claimed body'))
    const fetchOnce = () =>
      nodeHttpTransport.fetch({
        url: new URL(server.url('/claim')),
        method: 'GET',
        headers: new Headers(),
        net: { allowHosts: ['127.0.0.1'] },
      })
    const first = await fetchOnce()
    const stream = claimNodeBody(first.body!)
    expect(stream).toBeDefined()
    expect(claimNodeBody(first.body!)).toBeUndefined()
    const chunks: Buffer[] = []
    for await (const chunk of stream!) chunks.push(chunk as Buffer)
    expect(Buffer.concat(chunks).toString()).toBe('claimed body')
    const second = await fetchOnce()
    expect(await second.text()).toBe('claimed body')
    expect(claimNodeBody(second.body!)).toBeUndefined()
    const web = new Response('not from the Node transport')
    expect(claimNodeBody(web.body!)).toBeUndefined()
  })

  it('a body that broke off before anyone read it fails both ways, never hangs', async () => {
    server.route('/gone', (_req, res) => {
      res.writeHead(200, { 'content-length': '1000' })
      res.write('x'.repeat(10), () => res.destroy())
    })
    const fetchGone = async () => {
      const response = await nodeHttpTransport.fetch({
        url: new URL(server.url('/gone')),
        method: 'GET',
        headers: new Headers(),
        net: { allowHosts: ['127.0.0.1'] },
      })
      await new Promise((resolve) => setTimeout(resolve, 300))
      return response
    }
    const claimed = claimNodeBody((await fetchGone()).body!)!
    const written: number[] = []
    const progress = { admit: () => undefined, written: (n: number) => written.push(n) }
    await expect(pipeToFile(claimed, 0, progress, async () => undefined)).rejects.toThrow()
    await expect((await fetchGone()).text()).rejects.toThrow()
  })
})
