// S3: requests and bytes per operation of the S3 workspace and its tools, against the minimum
// possible for the same answer, and wall time against an `aws s3 cp`-style naive peer.
//
// Runs s3rver 3.7.1 on 127.0.0.1 in a child process (as the tests do, test/s3/server.ts), seeds
//   - big.txt: a 100 MB text object of fixed-width 100-byte lines (1,000,000 lines),
//   - many/: 10,000 small keys under one prefix,
//   - grep/: 1,000 small text objects, every 10th containing the needle,
// and measures three operations:
//   1. a read page: lines 500,000–500,099 of big.txt, by the `read` tool and by a ranged
//      `workspace.read` (which needs the byte offset; the fixed-width lines give it here),
//   2. ls of many/ with limit 1000, following next_cursor through every page,
//   3. grep files_with_matches over grep/ (`search` tool).
//
// Counting: SDK middleware on the workspace's client. Requests are counted at the
// 'finalizeRequest' step (one per HTTP request sent, retries included), per command. Bytes are
// response *body* bytes actually received: the innermost 'deserialize' middleware wraps each raw
// response body in a counting Transform before the SDK reads it (headers are not counted). A body
// that the consumer cancels early counts only what arrived.
//
// Wall time: each side runs once untimed (checked), then ROUNDS rounds alternate which side goes
// first; figures are medians, the ratio is the median of per-round ratios (as bench/search.ts).
// The peer fetches whole objects one after another with GetObject, as `aws s3 cp` would.
//
//   npx tsx bench/s3.ts            (S3_BENCH_ROUNDS=n, S3_BENCH_LS_KEYS=n to change sizes)
import {
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { performance } from 'node:perf_hooks'
import { Transform, type Readable } from 'node:stream'
import { Agent, WorkspacePath } from '../adapters/index.ts'
import { s3Workspace } from '../adapters/s3/index.ts'
import { startS3rver } from '../test/s3/server.ts'
import { machineLine, median } from './harness.ts'

const BUCKET = 'isoagent-bench'
const PREFIX = 'ws/'
const ROUNDS = Number(process.env.S3_BENCH_ROUNDS ?? 3)
const LINE_BYTES = 100
const BIG_LINES = 1_000_000 // 100 MB
const LS_KEYS = Number(process.env.S3_BENCH_LS_KEYS ?? 10_000)
const LS_PAGE = 1000
const GREP_FILES = 1000
const NEEDLE = 'NEEDLE_7f3a'
const READ_OFFSET = 500_000
const READ_LIMIT = 100
const SEED_CONCURRENCY = 32

const enc = new TextEncoder()
const dec = new TextDecoder()

function fail(message: string): never {
  throw new Error(`s3 bench: ${message}`)
}

/** Line `i` (0-based) of big.txt: exactly LINE_BYTES bytes including the newline. */
function bigLine(i: number): string {
  const head = `line ${String(i + 1).padStart(7, '0')} `
  return head + 'x'.repeat(LINE_BYTES - 1 - head.length) + '\n'
}

function grepFile(i: number): string {
  const lines: string[] = []
  for (let l = 0; l < 40; l++) lines.push(`file ${i} line ${l}: lorem ipsum dolor sit amet`)
  if (i % 10 === 0) lines[20] = `file ${i} has ${NEEDLE} here`
  return lines.join('\n') + '\n'
}

const grepName = (i: number) => `g${String(i).padStart(4, '0')}.txt`

async function mapLimit<T>(items: readonly T[], limit: number, run: (item: T) => Promise<void>) {
  let next = 0
  const worker = async () => {
    while (next < items.length) await run(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

// ---------------------------------------------------------------------------------------------
// Counting

interface Counts {
  requests: number
  bytes: number
  byCommand: Record<string, number>
}

function counting(client: S3Client) {
  let counts: Counts = { requests: 0, bytes: 0, byCommand: {} }
  client.middlewareStack.add(
    (next, context) => async (args) => {
      counts.requests++
      const name = String(context.commandName ?? '?').replace(/Command$/, '')
      counts.byCommand[name] = (counts.byCommand[name] ?? 0) + 1
      return next(args)
    },
    { step: 'finalizeRequest', priority: 'low', name: 'benchCountRequests' },
  )
  client.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args)
      const response = result.response as { body?: unknown }
      const body = response.body as Readable | undefined
      if (body !== undefined && typeof body.pipe === 'function') {
        const target = counts
        const counter = new Transform({
          transform(chunk: Buffer, _encoding, callback) {
            target.bytes += chunk.length
            callback(null, chunk)
          },
        })
        body.on('error', (error) => counter.destroy(error))
        counter.on('close', () => {
          if (!body.readableEnded) body.destroy()
        })
        response.body = body.pipe(counter)
      }
      return result
    },
    { step: 'deserialize', priority: 'low', name: 'benchCountBytes' },
  )
  return {
    reset() {
      counts = { requests: 0, bytes: 0, byCommand: {} }
    },
    take(): Counts {
      const taken = counts
      counts = { requests: 0, bytes: 0, byCommand: {} }
      return taken
    },
  }
}

/** Run `op` once with fresh counters; wait a tick so cancelled bodies settle. */
async function measure<T>(
  counter: ReturnType<typeof counting>,
  op: () => Promise<T>,
): Promise<{ value: T; counts: Counts }> {
  counter.reset()
  const value = await op()
  await new Promise((resolve) => setTimeout(resolve, 50))
  return { value, counts: counter.take() }
}

async function timePair(ours: () => Promise<unknown>, peer: () => Promise<unknown>) {
  const o: number[] = []
  const p: number[] = []
  const ratios: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const run = async (op: () => Promise<unknown>) => {
      const start = performance.now()
      await op()
      return performance.now() - start
    }
    let oursMs: number
    let peerMs: number
    if (r % 2 === 0) {
      oursMs = await run(ours)
      peerMs = await run(peer)
    } else {
      peerMs = await run(peer)
      oursMs = await run(ours)
    }
    o.push(oursMs)
    p.push(peerMs)
    ratios.push(oursMs / peerMs)
  }
  return {
    oursMs: median(o),
    peerMs: median(p),
    ratio: median(ratios),
    range: [Math.min(...ratios), Math.max(...ratios)] as const,
  }
}

// ---------------------------------------------------------------------------------------------

async function main() {
  console.log(machineLine())
  const server = await startS3rver([BUCKET])
  try {
    await run(server)
  } finally {
    await server.close()
  }
}

async function run(server: Awaited<ReturnType<typeof startS3rver>>) {
  const seedClient = server.client()
  const put = (key: string, body: Uint8Array) =>
    seedClient.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: PREFIX + key,
        Body: body,
        ContentLength: body.length,
      }),
    )

  // Seeding ------------------------------------------------------------------------------------
  let t = performance.now()
  const big = Buffer.allocUnsafe(BIG_LINES * LINE_BYTES)
  for (let i = 0; i < BIG_LINES; i++) big.write(bigLine(i), i * LINE_BYTES, 'latin1')
  await put('big.txt', big)
  console.log(
    `seeded big.txt (${big.length} bytes) in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  )

  t = performance.now()
  await mapLimit(
    Array.from({ length: LS_KEYS }, (_, i) => i),
    SEED_CONCURRENCY,
    async (i) => {
      await put(`many/k${String(i).padStart(5, '0')}.txt`, enc.encode(`key ${i}\n`))
    },
  )
  const lsSeedS = (performance.now() - t) / 1000
  console.log(`seeded ${LS_KEYS} keys under many/ in ${lsSeedS.toFixed(1)} s`)

  t = performance.now()
  let grepBytes = 0
  await mapLimit(
    Array.from({ length: GREP_FILES }, (_, i) => i),
    SEED_CONCURRENCY,
    async (i) => {
      const body = enc.encode(grepFile(i))
      grepBytes += body.length
      await put(`grep/${grepName(i)}`, body)
    },
  )
  console.log(
    `seeded ${GREP_FILES} objects (${grepBytes} bytes) under grep/ in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  )

  // The measured client and workspace ----------------------------------------------------------
  const client = server.client()
  const counter = counting(client)
  const workspace = s3Workspace({
    bucket: BUCKET,
    prefix: PREFIX,
    client,
    conditionalWrites: false,
  })
  const session = await Agent.create().session(workspace)
  const peerClient = server.client()
  const peerCounter = counting(peerClient)
  const getWhole = async (key: string) => {
    const out = await peerClient.send(new GetObjectCommand({ Bucket: BUCKET, Key: PREFIX + key }))
    return out.Body!.transformToByteArray()
  }

  const rows: string[][] = []
  const timings: string[] = []
  const fmtBytes = (n: number) => n.toLocaleString('en-US')
  const byCommand = (c: Counts) =>
    Object.entries(c.byCommand)
      .map(([k, v]) => `${v} ${k}`)
      .join(' + ')

  // 1. Read page ---------------------------------------------------------------------------------
  const expectedLines = Array.from({ length: READ_LIMIT }, (_, i) => bigLine(READ_OFFSET + i))
  const minReadBytes = READ_LIMIT * LINE_BYTES
  const readTool = () =>
    session.tool('read', { file_path: 'big.txt', offset: READ_OFFSET, limit: READ_LIMIT })
  const ranged = () =>
    workspace.read(WorkspacePath.parse('big.txt'), {
      offset: READ_OFFSET * LINE_BYTES,
      length: minReadBytes,
    })
  const naiveRead = async () => {
    const text = dec.decode(await getWhole('big.txt'))
    return text.split('\n').slice(READ_OFFSET, READ_OFFSET + READ_LIMIT)
  }
  {
    const tool = await measure(counter, readTool)
    if (tool.value.exitCode !== 0) fail(`read tool failed: ${tool.value.output.slice(0, 200)}`)
    const first = tool.value.output.split('\n')[0] ?? ''
    if (!first.endsWith(expectedLines[0]!.trimEnd()))
      fail(`read tool returned the wrong line: ${first}`)
    const meta = tool.value.metadata ?? {}
    console.log(
      `read tool metadata: ${JSON.stringify(Object.fromEntries(Object.entries(meta).filter(([k]) => k !== 'content')))}`,
    )
    const range = await measure(counter, ranged)
    if (dec.decode(range.value) !== expectedLines.join('')) fail('ranged read returned wrong bytes')
    const naive = await measure(peerCounter, naiveRead)
    if (naive.value.join('\n') + '\n' !== expectedLines.join('')) fail('naive read wrong')
    rows.push(
      [
        'read page, `read` tool',
        String(tool.counts.requests),
        byCommand(tool.counts),
        fmtBytes(tool.counts.bytes),
        '1',
        fmtBytes(minReadBytes),
        `${(tool.counts.bytes / minReadBytes).toFixed(0)}×`,
      ],
      [
        'read page, ranged `workspace.read`',
        String(range.counts.requests),
        byCommand(range.counts),
        fmtBytes(range.counts.bytes),
        '1',
        fmtBytes(minReadBytes),
        `${(range.counts.bytes / minReadBytes).toFixed(2)}×`,
      ],
      [
        'read page, naive whole GetObject',
        String(naive.counts.requests),
        byCommand(naive.counts),
        fmtBytes(naive.counts.bytes),
        '1',
        fmtBytes(minReadBytes),
        `${(naive.counts.bytes / minReadBytes).toFixed(0)}×`,
      ],
    )
    const tt = await timePair(readTool, naiveRead)
    const tr = await timePair(ranged, naiveRead)
    timings.push(
      `| read page, \`read\` tool vs naive | ${tt.oursMs.toFixed(0)} | ${tt.peerMs.toFixed(0)} | ${tt.ratio.toFixed(2)}× | ${tt.range[0].toFixed(2)}–${tt.range[1].toFixed(2)}× |`,
      `| read page, ranged \`workspace.read\` vs naive | ${tr.oursMs.toFixed(1)} | ${tr.peerMs.toFixed(0)} | ${tr.ratio.toFixed(4)}× | ${tr.range[0].toFixed(4)}–${tr.range[1].toFixed(4)}× |`,
    )
  }

  // 2. ls of the LS_KEYS-key prefix, every page -------------------------------------------------
  const lsAll = async () => {
    const names: string[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const r = await session.tool('ls', {
        path: 'many',
        limit: LS_PAGE,
        ...(cursor === undefined ? {} : { cursor }),
      })
      if (r.exitCode !== 0) fail(`ls failed: ${r.output.slice(0, 200)}`)
      pages++
      for (const e of (r.metadata?.entries ?? []) as { name: string }[]) names.push(e.name)
      cursor = (r.metadata?.next_cursor as string | null | undefined) ?? undefined
    } while (cursor !== undefined)
    return { names, pages }
  }
  const rawList = async (c: S3Client) => {
    const keys: string[] = []
    let token: string | undefined
    do {
      const out = await c.send(
        new ListObjectsV2Command({
          Bucket: BUCKET,
          Prefix: PREFIX + 'many/',
          Delimiter: '/',
          MaxKeys: LS_PAGE,
          ...(token === undefined ? {} : { ContinuationToken: token }),
        }),
      )
      for (const o of out.Contents ?? []) keys.push(o.Key!)
      token = out.IsTruncated ? out.NextContinuationToken : undefined
    } while (token !== undefined)
    return keys
  }
  {
    const ls = await measure(counter, lsAll)
    if (ls.value.names.length !== LS_KEYS) fail(`ls listed ${ls.value.names.length} of ${LS_KEYS}`)
    const raw = await measure(peerCounter, () => rawList(peerClient))
    if (raw.value.length !== LS_KEYS) fail(`raw list listed ${raw.value.length}`)
    const minPages = Math.ceil(LS_KEYS / LS_PAGE)
    rows.push([
      `ls ${LS_KEYS}-key prefix, limit ${LS_PAGE}, ${ls.value.pages} tool calls`,
      String(ls.counts.requests),
      byCommand(ls.counts),
      fmtBytes(ls.counts.bytes),
      String(minPages),
      fmtBytes(raw.counts.bytes),
      `${(ls.counts.bytes / raw.counts.bytes).toFixed(2)}×`,
    ])
    const tl = await timePair(lsAll, () => rawList(peerClient))
    timings.push(
      `| ls ${LS_KEYS} keys, \`ls\` tool vs raw ListObjectsV2 paging | ${tl.oursMs.toFixed(0)} | ${tl.peerMs.toFixed(0)} | ${tl.ratio.toFixed(2)}× | ${tl.range[0].toFixed(2)}–${tl.range[1].toFixed(2)}× |`,
    )
  }

  // 3. grep files_with_matches over GREP_FILES objects -------------------------------------------
  const expectedMatches = Array.from({ length: GREP_FILES }, (_, i) => i)
    .filter((i) => i % 10 === 0)
    .map((i) => `grep/${grepName(i)}`)
  const grepTool = () =>
    session.tool('search', {
      mode: 'grep',
      query: NEEDLE,
      path: 'grep',
      output_mode: 'files_with_matches',
      limit: 1000,
    })
  const naiveGrep = async () => {
    const keys = await (async () => {
      const out = await peerClient.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: PREFIX + 'grep/' }),
      )
      return (out.Contents ?? []).map((o) => o.Key!.slice(PREFIX.length))
    })()
    const hits: string[] = []
    for (const key of keys) if (dec.decode(await getWhole(key)).includes(NEEDLE)) hits.push(key)
    return hits
  }
  {
    const g = await measure(counter, grepTool)
    if (g.value.exitCode !== 0) fail(`grep failed: ${g.value.output.slice(0, 200)}`)
    if (g.value.output !== expectedMatches.join('\n'))
      fail(`grep found ${g.value.output.split('\n').length}, not ${expectedMatches.length}`)
    const n = await measure(peerCounter, naiveGrep)
    if (n.value.join('\n') !== expectedMatches.join('\n')) fail('naive grep differs')
    // Minimum: one list page (its XML) and every object's bytes, which is what the naive run fetched.
    const minBytes = n.counts.bytes
    rows.push(
      [
        `grep files_with_matches, ${GREP_FILES} objects, \`search\` tool`,
        String(g.counts.requests),
        byCommand(g.counts),
        fmtBytes(g.counts.bytes),
        String(1 + GREP_FILES),
        fmtBytes(minBytes),
        `${(g.counts.bytes / minBytes).toFixed(2)}×`,
      ],
      [
        `grep, naive list + whole GetObjects`,
        String(n.counts.requests),
        byCommand(n.counts),
        fmtBytes(n.counts.bytes),
        String(1 + GREP_FILES),
        fmtBytes(minBytes),
        `${(n.counts.bytes / minBytes).toFixed(2)}×`,
      ],
    )
    const tg = await timePair(grepTool, naiveGrep)
    timings.push(
      `| grep ${GREP_FILES} objects, \`search\` tool vs naive | ${tg.oursMs.toFixed(0)} | ${tg.peerMs.toFixed(0)} | ${tg.ratio.toFixed(2)}× | ${tg.range[0].toFixed(2)}–${tg.range[1].toFixed(2)}× |`,
    )
  }
  await session.close()

  const header = [
    'operation',
    'requests',
    'by command',
    'body bytes',
    'min requests',
    'min bytes',
    'bytes / min',
  ]
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`
  console.log('\nRequests and response body bytes (one run each):\n')
  console.log(line(header))
  console.log(line(header.map((_, i) => (i === 0 || i === 2 ? '---' : '--:'))))
  for (const r of rows) console.log(line(r))
  console.log(`\nWall time, median of ${ROUNDS} rounds (ms):\n`)
  console.log('| operation | ours ms | naive ms | ratio | ratio range |')
  console.log('| --- | --: | --: | --: | --: |')
  for (const tline of timings) console.log(tline)
}

await main()
