// download: our tool against `curl -o` on the same loopback file, and parallel ranges against one
// connection on a server that throttles each connection.
//
// A child process serves a file of DOWNLOAD_BENCH_MB MiB (default 1024) from disk on 127.0.0.1
// with Range/If-Range and a strong ETag (like a static file server), so the server never shares
// an event loop with the side being timed. Each round downloads it with curl (`curl -o`, and
// `curl -o` then an fsync of its file, since `download` fsyncs before it moves the file into
// place) and with the `download` tool (default: up to 4 connections; and `connections: 1`), each
// round starting at a different side. Times are medians over DOWNLOAD_BENCH_ROUNDS (default 3);
// ratios are the median of per-round ratios to `curl -o` (steadier when the load drifts).
// DOWNLOAD_BENCH_BEFORE=<checkout> (e.g. `git archive <commit> | tar -x`, node_modules linked)
// adds that checkout's `download` to the same rounds. THROTTLE_MB=0 skips the second part.
// Peak RSS growth of this process is sampled every 20 ms during our downloads.
// Then /throttled serves THROTTLE_MB MiB (default 64) at THROTTLE_MBPS MiB/s per connection:
// sequential (connections 1) against parallel (4).
//
//   npx tsx bench/download.ts            (DOWNLOAD_BENCH_MB=256 for a quick run)
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  closeSync,
  createWriteStream,
  fsyncSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { Agent } from '../adapters/index.ts'
import { localWorkspace } from '../adapters/node/index.ts'
import { machineLine, median } from './harness.ts'

const MB = Number(process.env.DOWNLOAD_BENCH_MB ?? 1024)
const ROUNDS = Number(process.env.DOWNLOAD_BENCH_ROUNDS ?? 3)
const THROTTLE_MB = Number(process.env.THROTTLE_MB ?? 64)
const THROTTLE_MBPS = Number(process.env.THROTTLE_MBPS ?? 16)
const MiB = 1024 * 1024
/** Another checkout (e.g. `git archive <commit>` with node_modules linked) timed in the same run. */
const BEFORE = process.env.DOWNLOAD_BENCH_BEFORE

const SERVER = `
const http = require('node:http'), fs = require('node:fs')
const [file, throttleBytesPerS] = process.argv.slice(1)
const size = fs.statSync(file).size
const etag = '"' + size.toString(16) + '-bench"'
const server = http.createServer((req, res) => {
  const throttled = req.url.startsWith('/throttled')
  const m = /^bytes=(\\d+)-(\\d*)$/.exec(req.headers.range || '')
  const ok = m && (!req.headers['if-range'] || req.headers['if-range'] === etag)
  const first = ok ? Number(m[1]) : 0
  const last = ok ? (m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)) : size - 1
  const head = { etag, 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream', 'content-length': String(last - first + 1) }
  if (ok) head['content-range'] = 'bytes ' + first + '-' + last + '/' + size
  res.writeHead(ok ? 206 : 200, head)
  const stream = fs.createReadStream(file, { start: first, end: last, highWaterMark: 1 << 20 })
  if (!throttled) return stream.pipe(res)
  const rate = Number(throttleBytesPerS), started = Date.now()
  let sent = 0
  stream.on('data', (chunk) => {
    stream.pause()
    res.write(chunk, () => {
      sent += chunk.length
      setTimeout(() => stream.resume(), Math.max(0, (sent / rate) * 1000 - (Date.now() - started)))
    })
  })
  stream.on('end', () => res.end())
  res.on('close', () => stream.destroy())
})
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'))
`

async function makeFile(path: string, bytes: number): Promise<string> {
  const out = createWriteStream(path)
  const hash = createHash('sha256')
  const block = new Uint8Array(MiB)
  let x = 12345
  for (let written = 0; written < bytes; written += block.length) {
    for (let i = 0; i < block.length; i += 4) {
      x = (x * 1103515245 + 12345) >>> 0
      block[i] = x & 0xff
      block[i + 1] = (x >>> 8) & 0xff
      block[i + 2] = (x >>> 16) & 0xff
      block[i + 3] = x >>> 24
    }
    const part = block.subarray(0, Math.min(block.length, bytes - written))
    hash.update(part)
    if (!out.write(part)) await new Promise<void>((r) => out.once('drain', () => r()))
  }
  await new Promise<void>((r, j) => out.end((e?: Error | null) => (e ? j(e) : r())))
  return hash.digest('hex')
}

/** What a side of the table runs: the `download` tool of one checkout, or curl. */
type Side = { name: string; run: () => Promise<number> }

/** A session on `work` from this checkout, or from the one at `root` (DOWNLOAD_BENCH_BEFORE). */
async function sessionFrom(root: string | undefined, work: string) {
  const load = async <T>(path: string): Promise<T> =>
    (await import(pathToFileURL(join(root!, path)).href)) as T
  const core =
    root === undefined ? { Agent } : await load<{ Agent: typeof Agent }>('adapters/index.ts')
  const node =
    root === undefined
      ? { localWorkspace }
      : await load<{ localWorkspace: typeof localWorkspace }>('adapters/node/index.ts')
  return core.Agent.create().session(node.localWorkspace(work), {
    net: { allowHosts: ['127.0.0.1'] },
  })
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'isoagent-bench-download-'))
  const source = join(dir, 'source.bin')
  const work = join(dir, 'ws')
  spawnSync('mkdir', ['-p', work])
  const bytes = MB * MiB
  const digest = await makeFile(source, bytes)
  const child = spawn(process.execPath, ['-e', SERVER, source, String(THROTTLE_MBPS * MiB)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const port = await new Promise<number>((resolve) =>
    child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))),
  )
  const url = `http://127.0.0.1:${port}/file.bin`
  const session = await sessionFrom(undefined, work)
  const before = BEFORE === undefined ? undefined : await sessionFrom(BEFORE, work)
  try {
    const curl = (fsync: boolean) => async () => {
      const out = join(dir, 'curl.bin')
      const t = performance.now()
      const r = spawnSync('curl', ['-sS', '-o', out, url])
      if (r.status !== 0) throw new Error(`curl failed: ${r.stderr}`)
      if (fsync) {
        const fd = openSync(out, 'r+')
        fsyncSync(fd)
        closeSync(fd)
      }
      const ms = performance.now() - t
      if (statSync(out).size !== bytes) throw new Error('curl: wrong size')
      rmSync(out)
      return ms
    }
    let peakGrowth = 0
    const ours = (s: typeof session, args: Record<string, unknown>) => async () => {
      global.gc?.()
      const base = process.memoryUsage.rss()
      const sampler = setInterval(() => {
        if (s === session) peakGrowth = Math.max(peakGrowth, process.memoryUsage.rss() - base)
      }, 20)
      const t = performance.now()
      const r = await s.tool('download', {
        url,
        file_path: 'ours.bin',
        overwrite: true,
        max_bytes: 8 * 1024 * MiB,
        ...args,
      })
      const ms = performance.now() - t
      clearInterval(sampler)
      if (s === session) peakGrowth = Math.max(peakGrowth, process.memoryUsage.rss() - base)
      if (r.exitCode !== 0) throw new Error(`download failed: ${r.output}`)
      if (r.metadata?.sha256 !== digest) throw new Error('download: wrong sha256')
      return ms
    }
    const sides: Side[] = [
      { name: 'curl -o', run: curl(false) },
      { name: 'curl -o, then fsync', run: curl(true) },
      { name: 'download (default: 4 connections)', run: ours(session, {}) },
      { name: 'download (connections: 1)', run: ours(session, { connections: 1 }) },
    ]
    if (before !== undefined)
      sides.push(
        { name: `before: download (default)`, run: ours(before, {}) },
        { name: `before: download (connections: 1)`, run: ours(before, { connections: 1 }) },
      )
    const times = sides.map(() => [] as number[])
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts at a different side, so no side always runs on a cold or warm cache.
      for (let k = 0; k < sides.length; k++) {
        const i = (k + round) % sides.length
        times[i]!.push(await sides[i]!.run())
      }
    }
    const mbps = (ms: number) => bytes / MiB / (ms / 1000)
    console.log(machineLine())
    console.log(`download of ${MB} MiB over loopback, ${ROUNDS} rounds (medians)\n`)
    console.log('| side | time | throughput | vs curl -o (median of per-round ratios) |')
    console.log('|---|---:|---:|---:|')
    for (const [i, side] of sides.entries()) {
      const ms = median(times[i]!)
      const ratio = median(times[i]!.map((t, round) => times[0]![round]! / t))
      console.log(
        `| ${side.name} | ${(ms / 1000).toFixed(2)} s | ${mbps(ms).toFixed(0)} MiB/s | ${ratio.toFixed(2)}x |`,
      )
    }
    console.log(
      `\npeak RSS growth during our downloads: ${(peakGrowth / MiB).toFixed(1)} MiB (goal < 150 MB)`,
    )
  } finally {
    await session.close()
    await before?.close()
    child.kill()
    rmSync(dir, { recursive: true, force: true })
  }
  if (process.env.THROTTLE_MB !== '0') await throttledBench()
}

/** Sequential against parallel on a THROTTLE_MB MiB file served at THROTTLE_MBPS per connection. */
async function throttledBench() {
  const dir = mkdtempSync(join(tmpdir(), 'isoagent-bench-throttle-'))
  const source = join(dir, 'source.bin')
  const work = join(dir, 'ws')
  spawnSync('mkdir', ['-p', work])
  await makeFile(source, THROTTLE_MB * MiB)
  const child = spawn(process.execPath, ['-e', SERVER, source, String(THROTTLE_MBPS * MiB)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const port = await new Promise<number>((resolve) =>
    child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))),
  )
  const session = await Agent.create().session(localWorkspace(work), {
    net: { allowHosts: ['127.0.0.1'] },
  })
  try {
    const run = async (connections: number) => {
      const t = performance.now()
      const r = await session.tool('download', {
        url: `http://127.0.0.1:${port}/throttled.bin`,
        file_path: 'throttled.bin',
        overwrite: true,
        connections,
      })
      if (r.exitCode !== 0) throw new Error(`throttled download failed: ${r.output}`)
      return { ms: performance.now() - t, strategy: String(r.metadata?.strategy) }
    }
    const one = await run(1)
    const four = await run(4)
    console.log(`\nthrottled server (${THROTTLE_MBPS} MiB/s per connection), ${THROTTLE_MB} MiB\n`)
    console.log('| connections | strategy | time | speed-up |')
    console.log('|---:|---|---:|---:|')
    console.log(`| 1 | ${one.strategy} | ${(one.ms / 1000).toFixed(2)} s | 1.00x |`)
    console.log(
      `| 4 | ${four.strategy} | ${(four.ms / 1000).toFixed(2)} s | ${(one.ms / four.ms).toFixed(2)}x |`,
    )
  } finally {
    await session.close()
    child.kill()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
