// download: our tool against `curl -o` on the same loopback file, and parallel ranges against one
// connection on a server that throttles each connection.
//
// A child process serves a file of DOWNLOAD_BENCH_MB MiB (default 1024) from disk on 127.0.0.1
// with Range/If-Range and a strong ETag (like a static file server), so the server never shares
// an event loop with the side being timed. Each round downloads it with curl and with the
// `download` tool (default arguments: up to 4 ranges) and once more with `connections: 1`,
// alternating which goes first; figures are medians over DOWNLOAD_BENCH_ROUNDS (default 3).
// Peak RSS growth of this process is sampled every 20 ms during our downloads.
// Then /throttled serves THROTTLE_MB MiB (default 64) at THROTTLE_MBPS MiB/s per connection:
// sequential (connections 1) against parallel (4).
//
//   npx tsx bench/download.ts            (DOWNLOAD_BENCH_MB=256 for a quick run)
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Agent } from '../adapters/index.ts'
import { localWorkspace } from '../adapters/node/index.ts'
import { machineLine, median } from './harness.ts'

const MB = Number(process.env.DOWNLOAD_BENCH_MB ?? 1024)
const ROUNDS = Number(process.env.DOWNLOAD_BENCH_ROUNDS ?? 3)
const THROTTLE_MB = Number(process.env.THROTTLE_MB ?? 64)
const THROTTLE_MBPS = Number(process.env.THROTTLE_MBPS ?? 16)
const MiB = 1024 * 1024

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
  const session = await Agent.create().session(localWorkspace(work), {
    net: { allowHosts: ['127.0.0.1'] },
  })
  try {
    const curl = () => {
      const t = performance.now()
      const r = spawnSync('curl', ['-sS', '-o', join(dir, 'curl.bin'), url])
      if (r.status !== 0) throw new Error(`curl failed: ${r.stderr}`)
      const ms = performance.now() - t
      if (statSync(join(dir, 'curl.bin')).size !== bytes) throw new Error('curl: wrong size')
      rmSync(join(dir, 'curl.bin'))
      return ms
    }
    let peakGrowth = 0
    const ours = async (args: Record<string, unknown>) => {
      global.gc?.()
      const base = process.memoryUsage.rss()
      const sampler = setInterval(() => {
        peakGrowth = Math.max(peakGrowth, process.memoryUsage.rss() - base)
      }, 20)
      const t = performance.now()
      const r = await session.tool('download', {
        url,
        file_path: 'ours.bin',
        overwrite: true,
        max_bytes: 8 * 1024 * MiB,
        ...args,
      })
      const ms = performance.now() - t
      clearInterval(sampler)
      peakGrowth = Math.max(peakGrowth, process.memoryUsage.rss() - base)
      if (r.exitCode !== 0) throw new Error(`download failed: ${r.output}`)
      if (r.metadata?.sha256 !== digest) throw new Error('download: wrong sha256')
      return { ms, strategy: String(r.metadata?.strategy) }
    }
    const curlMs: number[] = []
    const parMs: number[] = []
    const seqMs: number[] = []
    let strategy = ''
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) curlMs.push(curl())
      const p = await ours({})
      parMs.push(p.ms)
      strategy = p.strategy
      seqMs.push((await ours({ connections: 1 })).ms)
      if (round % 2 === 1) curlMs.push(curl())
    }
    const mbps = (ms: number) => bytes / MiB / (ms / 1000)
    const c = median(curlMs)
    const p = median(parMs)
    const s = median(seqMs)
    console.log(machineLine())
    console.log(`download of ${MB} MiB over loopback, ${ROUNDS} rounds (medians)\n`)
    console.log('| side | time | throughput | vs curl |')
    console.log('|---|---:|---:|---:|')
    console.log(`| curl -o | ${(c / 1000).toFixed(2)} s | ${mbps(c).toFixed(0)} MiB/s | 1.00x |`)
    console.log(
      `| download (default, ${strategy}) | ${(p / 1000).toFixed(2)} s | ${mbps(p).toFixed(0)} MiB/s | ${(mbps(p) / mbps(c)).toFixed(2)}x |`,
    )
    console.log(
      `| download (connections: 1) | ${(s / 1000).toFixed(2)} s | ${mbps(s).toFixed(0)} MiB/s | ${(mbps(s) / mbps(c)).toFixed(2)}x |`,
    )
    console.log(
      `\npeak RSS growth during our downloads: ${(peakGrowth / MiB).toFixed(1)} MiB (goal < 150 MB)`,
    )
  } finally {
    await session.close()
    child.kill()
    rmSync(dir, { recursive: true, force: true })
  }
  await throttledBench()
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
