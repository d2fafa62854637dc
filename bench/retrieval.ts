// Semantic retrieval: query, index build and memory, each against the plain floor in one run.
//
//   (a) Query over 100,000 chunks × 384 dimensions (zero-latency embedder): p50 of a session's
//       `search` mode `semantic` (embed the query, exact cosine over every vector, verify the
//       hits, render) against a plain Float32Array dot-product loop with the same top-10 over
//       the same vectors; hybrid's p50 beside it (no peer: it adds three channels).
//   (b) Index build over this repository's text files (in a memory workspace): a session's
//       build until `ready` against the same work written plainly: list, read, chunk (same
//       chunker: ids, digests), embed (same embedder, same 64-input calls) and copy into one
//       preallocated Float32Array. Tree-sitter symbols off on both sides; a row with them on.
//   (c) Memory: the index's vector bytes at rest, and the ArrayBuffer memory the build kept,
//       against the raw bytes of the same vectors in one Float32Array.
//
// Whole-operation timing: each side once untimed, then ROUNDS rounds alternating which goes
// first; medians and the median of per-round ratios.
//
//   npx tsx bench/retrieval.ts     (RETRIEVAL_BENCH_ROUNDS=n, RETRIEVAL_BENCH_CHUNKS=n)
import { execFileSync } from 'node:child_process'
import { setMaxListeners } from 'node:events'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import {
  Agent,
  memoryWorkspace,
  type EmbeddingInput,
  type EmbeddingModel,
  type Session,
  type WorkspaceServices,
} from '../adapters/index.ts'
import { nodeTreeSitterSymbols } from '../adapters/node/index.ts'
import { chunkFile } from '../src/retrieval/chunker.ts'
import { isEligiblePath } from '../src/retrieval/eligibility.ts'
import { normalized, type VectorIndex } from '../src/retrieval/vector-index.ts'
import { workspaceFileLister } from '../src/tools/search/retrieval-files.ts'
import { collectGarbage, machineLine, median } from './harness.ts'

const ROUNDS = Number(process.env.RETRIEVAL_BENCH_ROUNDS ?? 5)
const CHUNKS = Number(process.env.RETRIEVAL_BENCH_CHUNKS ?? 100_000)
const QUERY_ROUNDS = Number(process.env.RETRIEVAL_BENCH_QUERY_ROUNDS ?? 21)
const DIM = 384
const K = 10
const ROOT = join(import.meta.dirname, '..')

/** A zero-latency embedder: each text's vector drawn from a generator seeded by its hash. */
function vectorOf(text: string, out = new Float32Array(DIM)): Float32Array {
  let h = 2166136261
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619)
  let x = h >>> 0 || 1
  for (let i = 0; i < DIM; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = ((x >>> 0) / 4294967296) * 2 - 1
  }
  return out
}
const embedder: EmbeddingModel = {
  provider: 'bench',
  model: 'xorshift-384',
  dimension: DIM,
  normalization: 'none',
  embed: async (inputs: readonly EmbeddingInput[]) => ({
    vectors: inputs.map(({ id, text }) => ({ id, values: vectorOf(text) })),
  }),
}

async function open(ws: WorkspaceServices, symbols = false): Promise<Session> {
  return Agent.create().session(ws, {
    retrieval: {
      embeddings: embedder,
      readinessTimeoutMs: 30_000,
      symbols: symbols ? nodeTreeSitterSymbols : false,
      limits: { maxChunks: 200_000, maxTextBytes: 1 << 30 },
    },
  })
}

async function ready(session: Session): Promise<void> {
  while (session.retrievalStatus()?.phase === 'building') await new Promise((r) => setTimeout(r, 1))
}

async function timeBoth(
  ours: () => Promise<unknown>,
  peer: () => Promise<unknown>,
  rounds = ROUNDS,
  warmups = 1,
) {
  for (let i = 0; i < warmups; i++) {
    await ours()
    await peer()
  }
  const o: number[] = []
  const p: number[] = []
  const ratios: number[] = []
  for (let round = 0; round < rounds; round++) {
    const time = async (f: () => Promise<unknown>) => {
      collectGarbage()
      const start = performance.now()
      await f()
      return performance.now() - start
    }
    let a: number, b: number
    if (round % 2 === 0) {
      a = await time(ours)
      b = await time(peer)
    } else {
      b = await time(peer)
      a = await time(ours)
    }
    o.push(a)
    p.push(b)
    ratios.push(a / b)
  }
  return { ours: median(o), peer: median(p), ratio: median(ratios) }
}

/** The index's own scan (no tool around it): VectorIndex.search, top K. */
function index_(session: Session, q: Float32Array) {
  const retrieval = (session as unknown as { agent: { retrieval?: { index: VectorIndex } } }).agent
    .retrieval
  if (retrieval === undefined) throw new Error('no retrieval on the session')
  return retrieval.index.search(q, K)
}

/** The floor of (a): dot products over one Float32Array, the best K kept in order. */
function plainTopK(vectors: Float32Array, count: number, q: Float32Array): number[] {
  const top: { slot: number; score: number }[] = []
  for (let slot = 0; slot < count; slot++) {
    let dot = 0
    const base = slot * DIM
    for (let i = 0; i < DIM; i++) dot += q[i]! * vectors[base + i]!
    if (top.length < K || dot > top[top.length - 1]!.score) {
      let at = top.length
      while (at > 0 && dot > top[at - 1]!.score) at--
      top.splice(at, 0, { slot, score: dot })
      if (top.length > K) top.pop()
    }
  }
  return top.map((t) => t.slot)
}

/** 100,000 chunks: files of 8 chunks of 80 short, distinct lines. */
function syntheticFiles(chunks: number): Record<string, string> {
  const files: Record<string, string> = {}
  for (let f = 0; f * 8 < chunks; f++) {
    const lines = Array.from({ length: 640 }, (_, l) => `v${f}.${l}`)
    files[`d${f % 100}/f${f}.txt`] = lines.join('\n') + '\n'
  }
  return files
}

async function queryBench() {
  const files = syntheticFiles(CHUNKS)
  const workspace = memoryWorkspace(files)
  collectGarbage()
  const arrayBuffersBefore = process.memoryUsage().arrayBuffers
  const session = await open(workspace)
  const started = performance.now()
  await ready(session)
  const buildMs = performance.now() - started
  // Freed ArrayBuffers leave the count when V8's sweeper gets to them: collect, let it run, again.
  collectGarbage()
  await new Promise((r) => setTimeout(r, 100))
  collectGarbage()
  const keptBytes = process.memoryUsage().arrayBuffers - arrayBuffersBefore
  const status = session.retrievalStatus()!
  // The same vectors, plainly: one Float32Array, each vector normalised as the index does.
  const raw = new Float32Array(status.vectorRecords * DIM)
  let n = 0
  for (const text of Object.values(files)) {
    for (const chunk of (await chunkFile('x', new TextEncoder().encode(text))).chunks)
      raw.set(normalized(vectorOf(chunk.text)), n++ * DIM)
  }
  const query = 'v123.45 teardown'
  const q = normalized(vectorOf(query))
  const semantic = async () => session.tool('search', { mode: 'semantic', query, limit: K })
  const hybrid = async () => session.tool('search', { mode: 'hybrid', query, limit: K })
  const check = await semantic()
  if (check.exitCode !== 0) throw new Error(check.output)
  const floor = async () => plainTopK(raw, n, q)
  const a = await timeBoth(semantic, floor, QUERY_ROUNDS, 5)
  const index = async () => index_(session, q)
  const i = await timeBoth(index, floor, QUERY_ROUNDS, 5)
  const h = await timeBoth(hybrid, floor, Math.max(3, ROUNDS), 1)
  await session.close()
  return { status, buildMs, keptBytes, rawBytes: raw.byteLength, a, i, h }
}

/** This repository's eligible text files (git ls-files), ≤ 512 KiB. */
function repositoryFiles(): Record<string, string> {
  const out: Record<string, string> = {}
  const listed = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n')
  for (const path of listed) {
    if (path === '' || !isEligiblePath(path)) continue
    const full = join(ROOT, path)
    if (statSync(full, { throwIfNoEntry: false })?.isFile() !== true) continue
    const bytes = readFileSync(full)
    if (bytes.length > 512 * 1024 || bytes.includes(0)) continue
    out[path] = bytes.toString('utf8')
  }
  return out
}

/** The floor of (b): list, read, chunk, embed in calls of 64, copy into one array. */
async function plainBuild(ws: WorkspaceServices): Promise<number> {
  const vectors = new Float32Array(200_000 * DIM)
  let n = 0
  const signal = new AbortController().signal
  for await (const path of workspaceFileLister(ws)(signal)) {
    if (!isEligiblePath(path)) continue
    const { chunks } = await chunkFile(path, await ws.read(path))
    for (let i = 0; i < chunks.length; i += 64) {
      const batch = chunks.slice(i, i + 64).map((c) => ({ id: c.id, text: c.text }))
      const { vectors: answer } = await embedder.embed(batch, { signal })
      for (const v of answer) vectors.set(normalized(Float32Array.from(v.values)), n++ * DIM)
    }
  }
  return n
}

async function buildBench(symbols: boolean) {
  const files = repositoryFiles()
  let chunks = 0
  const ours = async () => {
    const session = await open(memoryWorkspace(files), symbols)
    await ready(session)
    chunks = session.retrievalStatus()!.indexedChunks
    await session.close()
  }
  const peer = async () => plainBuild(memoryWorkspace(files))
  const timing = await timeBoth(ours, peer)
  return { files: Object.keys(files).length, chunks, ...timing }
}

// Each in-flight embedding call listens on the index's signal: more than 10 at once is normal.
setMaxListeners(100)
const ms = (x: number) => x.toFixed(x >= 100 ? 0 : 1)
console.log(`retrieval · ${machineLine()} · ${ROUNDS} rounds`)
const q = await queryBench()
const b = await buildBench(false)
const bs = await buildBench(true)
const perSec = (chunks: number, t: number) => Math.round(chunks / (t / 1000))
console.log(`\n| operation | ours | floor | ratio |\n| --- | ---: | ---: | ---: |`)
console.log(
  `| semantic p50, ${q.status.vectorRecords} × ${DIM} | ${ms(q.a.ours)} ms | ${ms(q.a.peer)} ms | ${q.a.ratio.toFixed(2)}× |`,
)
console.log(
  `| VectorIndex.search alone | ${ms(q.i.ours)} ms | ${ms(q.i.peer)} ms | ${q.i.ratio.toFixed(2)}× |`,
)
console.log(
  `| hybrid p50, same index | ${ms(q.h.ours)} ms | ${ms(q.h.peer)} ms | ${q.h.ratio.toFixed(2)}× |`,
)
console.log(
  `| build, this repo (${b.files} files, ${b.chunks} chunks) | ${perSec(b.chunks, b.ours)} chunks/s | ${perSec(b.chunks, b.peer)} chunks/s | ${b.ratio.toFixed(2)}× |`,
)
console.log(
  `| build with tree-sitter symbols | ${perSec(bs.chunks, bs.ours)} chunks/s | ${perSec(bs.chunks, bs.peer)} chunks/s | ${bs.ratio.toFixed(2)}× |`,
)
const mb = (x: number) => (x / 1024 / 1024).toFixed(1)
console.log(
  `| vector bytes at rest, ${q.status.vectorRecords} vectors | ${mb(q.status.vectorBytes)} MiB | ${mb(q.rawBytes)} MiB | ${(q.status.vectorBytes / q.rawBytes).toFixed(2)}× |`,
)
console.log(
  `| ArrayBuffer memory the build kept | ${mb(q.keptBytes)} MiB | ${mb(q.rawBytes)} MiB | ${(q.keptBytes / q.rawBytes).toFixed(2)}× |`,
)
console.log(`\n(100k-chunk index built in ${ms(q.buildMs)} ms)`)
