// The browser row of the git bench: the bench repository (working tree and .git) imported into
// browserWorkspace (lightning-fs over IndexedDB) in headless Debian Chromium, and the `git` tool's
// `status` and `log -n 100` timed in the page, against the git CLI on the same repository on
// disk. The first `status` in the page (its index was written on disk, so no stat matches and
// every file is hashed once) is reported apart, untimed by the rounds.
import { readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as nodePath from 'node:path'
import { performance } from 'node:perf_hooks'
import { chromium } from 'playwright-core'
import { bundle } from '../test/runtime/bundle.ts'
import { median } from './harness.ts'

const PAGE_ENTRY = `
import { Agent, WorkspacePath } from './adapters/index.ts'
import { browserWorkspace } from './adapters/browser/index.ts'
let session
globalThis.bench = {
  async load(name) {
    const bytes = new Uint8Array(await (await fetch('/repo.bin')).arrayBuffer())
    const view = new DataView(bytes.buffer)
    const files = []
    for (let at = 0; at < bytes.length; ) {
      const n = view.getUint32(at)
      const path = new TextDecoder().decode(bytes.subarray(at + 4, at + 4 + n))
      const size = view.getUint32(at + 4 + n)
      files.push([path, bytes.subarray(at + 8 + n, at + 8 + n + size)])
      at += 8 + n + size
    }
    const workspace = browserWorkspace({ name })
    for (let i = 0; i < files.length; i += 32)
      await Promise.all(files.slice(i, i + 32).map(([p, b]) => workspace.write(WorkspacePath.parse(p), b)))
    session = await Agent.create().session(workspace)
    return files.length
  },
  async git(command, args) {
    const start = performance.now()
    const result = await session.git(command, args)
    return { ms: performance.now() - start, output: result.output, exitCode: result.exitCode }
  },
}
`

/** Every file under `dir` as `[relative path, bytes]`. */
function filesUnder(dir: string, rel = '', out: [string, Buffer][] = []): [string, Buffer][] {
  for (const entry of readdirSync(nodePath.join(dir, rel), { withFileTypes: true })) {
    const path = rel === '' ? entry.name : `${rel}/${entry.name}`
    if (entry.isDirectory()) filesUnder(dir, path, out)
    else if (entry.isFile()) out.push([path, readFileSync(nodePath.join(dir, path))])
  }
  return out
}

/** The files as one buffer: per file, u32 path length, path, u32 size, bytes. */
function packFiles(files: [string, Buffer][]): Buffer {
  const parts: Buffer[] = []
  for (const [path, data] of files) {
    const name = Buffer.from(path)
    const head = Buffer.alloc(4)
    head.writeUInt32BE(name.length)
    const size = Buffer.alloc(4)
    size.writeUInt32BE(data.length)
    parts.push(head, name, size, data)
  }
  return Buffer.concat(parts)
}

/** One row of the browser measurement. */
export interface BrowserRow {
  operation: string
  oursMs: number
  peerMs: number
  ratio: number
  range: [number, number]
}

/** Status and log in Chromium over lightning-fs, against `peer` (the git CLI) in the same run. */
export async function browserRows(
  dataDir: string,
  peer: { status: () => Promise<string>; log: () => Promise<string> },
  rounds: number,
): Promise<{ rows: BrowserRow[]; importMs: number; firstStatusMs: number; files: number }> {
  const repoRoot = nodePath.resolve(import.meta.dirname, '..')
  const code = await bundle({ contents: PAGE_ENTRY, resolveDir: repoRoot, target: 'browser' })
  const blob = packFiles(filesUnder(dataDir))
  const server = createServer((req, res) => {
    if (req.url === '/page.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(code)
    else if (req.url === '/repo.bin') res.writeHead(200).end(blob)
    else
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><script type="module" src="/page.js"></script>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  })
  try {
    const page = await browser.newPage()
    page.setDefaultTimeout(0)
    await page.goto(`http://127.0.0.1:${port}/`)
    await page.waitForFunction(() => 'bench' in globalThis)
    type Api = {
      load(name: string): Promise<number>
      git(c: string, a: object): Promise<{ ms: number; output: string; exitCode: number }>
    }
    const call = (command: string, args: object) =>
      page.evaluate(
        ([c, a]) => (globalThis as unknown as { bench: Api }).bench.git(c as string, a as object),
        [command, args] as const,
      )
    const t0 = performance.now()
    const files = await page.evaluate(
      (name) => (globalThis as unknown as { bench: Api }).bench.load(name),
      `git-bench-${Date.now()}`,
    )
    const importMs = performance.now() - t0
    const first = await call('status', { limit: 200 })
    const ops = [
      {
        operation: 'status',
        ours: async () => {
          const r = await call('status', { limit: 200 })
          return { ms: r.ms, text: `${r.output}\n` }
        },
        peer: peer.status,
      },
      {
        operation: 'log -n 100',
        ours: async () => {
          const r = await call('log', { limit: 100 })
          const text = `${r.output.replace(/\n*\.\.\. \(more commits[^\n]*$/, '')}\n`
          return { ms: r.ms, text }
        },
        peer: peer.log,
      },
    ]
    const rows: BrowserRow[] = []
    for (const op of ops) {
      const [a, b] = [await op.ours(), await op.peer()]
      if (a.text !== b) throw new Error(`${op.operation} (browser): output differs from git's`)
      const oursMs: number[] = []
      const peerMs: number[] = []
      const ratios: number[] = []
      for (let r = 0; r < rounds; r++) {
        const o = (await op.ours()).ms
        const start = performance.now()
        await op.peer()
        const p = performance.now() - start
        oursMs.push(o)
        peerMs.push(p)
        ratios.push(o / p)
      }
      rows.push({
        operation: op.operation,
        oursMs: median(oursMs),
        peerMs: median(peerMs),
        ratio: median(ratios),
        range: [Math.min(...ratios), Math.max(...ratios)],
      })
    }
    return { rows, importMs, firstStatusMs: first.ms, files }
  } finally {
    await browser.close()
    server.close()
  }
}
