// The pure parts of retrieval: chunk ids, chunk shape, exclusions, RRF by hand, answer checks,
// and the OpenAI-compatible embedder's wire handling (against the loopback fake).
import { createHash } from 'node:crypto'
import { getEventListeners } from 'node:events'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  openAICompatibleEmbeddings,
  checkEmbeddingAnswer,
  IsoagentError,
} from '../../adapters/index.ts'
import { chunkFile, chunkId, CHUNK_LIMITS } from '../../src/retrieval/chunker.ts'
import { isEligiblePath } from '../../src/retrieval/eligibility.ts'
import { embedBatch } from '../../src/retrieval/embed-batches.ts'
import { RETRIEVAL_DEFAULTS } from '../../src/retrieval/retrieval-options.ts'
import type { ChunkRecord } from '../../src/retrieval/vector-index.ts'
import { VectorIndex } from '../../src/retrieval/vector-index.ts'
import { fuse } from '../../src/tools/search/hybrid-mode.ts'
import { FAKE_DIMENSION, startFakeEmbeddings, type FakeEmbeddings } from './fake-embeddings.ts'

describe('chunks', () => {
  it('ids are sha256 of the domain, path, digest and u64 LE byte range', () => {
    const digest = 'sha256:' + 'ab'.repeat(32)
    const range = Buffer.alloc(16)
    range.writeBigUInt64LE(5n, 0)
    range.writeBigUInt64LE(300n, 8)
    const expected = createHash('sha256')
      .update(Buffer.concat([Buffer.from(`a3s.workspace.chunk.v1\0src/a.ts\0${digest}\0`), range]))
      .digest('hex')
    expect(chunkId('src/a.ts', digest, 5, 300)).toBe(`sha256:${expected}`)
  })

  it('cuts 80 lines / 64 KiB, at most 128 per file, digest of the whole file', async () => {
    const text = Array.from({ length: 200 }, (_, i) => `line ${i + 1}`).join('\n') + '\n'
    const file = await chunkFile('a.txt', new TextEncoder().encode(text))
    expect(file.digest).toBe('sha256:' + createHash('sha256').update(text).digest('hex'))
    expect(file.chunks.map((c) => [c.startLine, c.endLine])).toEqual([
      [1, 80],
      [81, 160],
      [161, 200],
    ])
    expect(file.chunks.map((c) => c.text).join('')).toBe(text)
    const long = 'x'.repeat(CHUNK_LIMITS.bytes + 10) + '\nend\n'
    const cut = await chunkFile('b.txt', new TextEncoder().encode(long))
    expect(cut.chunks[0]!.endByte).toBe(CHUNK_LIMITS.bytes)
    expect(cut.chunks.map((c) => c.text).join('')).toBe(long)
    const many = Array.from({ length: 129 * 80 }, () => 'y').join('\n')
    const capped = await chunkFile('c.txt', new TextEncoder().encode(many))
    expect(capped.chunks).toHaveLength(128)
    expect(capped.truncated).toBe(true)
  })

  it('excludes the listed directories, extensions and secret names', () => {
    for (const p of [
      '.env',
      '.env.local',
      'a/.npmrc',
      'x/credentials.json',
      'secrets.yaml',
      'k/server.pem',
      'id_ed25519',
      'node_modules/a/b.js',
      'a/target/x.rs',
      'coverage/x.js',
      '.ssh/config',
      'a/.git/HEAD',
      'auth.json',
    ])
      expect(isEligiblePath(p), p).toBe(false)
    for (const p of [
      'src/a.ts',
      '.env.example',
      'credentials.sample',
      'docs/keys.md',
      'builder/x.ts',
    ])
      expect(isEligiblePath(p), p).toBe(true)
  })
})

const rec = (path: string, start: number): ChunkRecord => ({
  id: `${path}@${start}`,
  path,
  startByte: start,
  endByte: start + 1,
  startLine: 1,
  endLine: 1,
  text: '',
  digest: 'd',
  slot: 0,
})

describe('RRF (k = 60), by hand', () => {
  it('sums 1/(60 + rank), exact identifiers first, then score, path, start byte; 2 per file', () => {
    const A = rec('a.ts', 0),
      B = rec('b.ts', 0),
      C = rec('c.ts', 0),
      C2 = rec('c.ts', 10),
      C3 = rec('c.ts', 20),
      D = rec('d.ts', 0)
    const fused = fuse(
      { exact: [D], lexical: [A, B, C], symbol: [], semantic: [B, A, C2, C3, C] },
      new Set([D.id]),
    )
    // A: 1/61 + 1/62; B: 1/62 + 1/61 (tie: path a < b); C: 1/63 + 1/65; C2: 1/63; C3: 1/64 (3rd of c.ts: dropped); D exact first
    expect(fused.map((h) => h.record.id)).toEqual([D.id, A.id, B.id, C.id, C2.id])
    expect(fused[1]!.fusedScore).toBeCloseTo(1 / 61 + 1 / 62, 12)
    expect(fused[3]!.fusedScore).toBeCloseTo(1 / 63 + 1 / 65, 12)
    expect(fused[3]!.channels).toEqual({ lexical: 3, semantic: 5 })
    expect(fused[0]).toMatchObject({ exactIdentifier: true, channels: { exact: 1 } })
  })
})

describe('vector index', () => {
  it('ranks by exact cosine and reuses freed slots in one buffer', () => {
    const index = new VectorIndex(2)
    const chunk = (id: string) => ({
      id,
      startByte: 0,
      endByte: 1,
      startLine: 1,
      endLine: 1,
      text: id,
    })
    index.publish('a', 'd', [chunk('a1')], [Float32Array.of(1, 0)])
    index.publish('b', 'd', [chunk('b1')], [Float32Array.of(3, 3)])
    expect(
      index.search(Float32Array.of(0, 5), 2).map((s) => [s.record.id, +s.score.toFixed(4)]),
    ).toEqual([
      ['b1', 0.7071],
      ['a1', 0],
    ])
    const bytes = index.bytes
    index.publish('a', 'd', [chunk('a2')], [Float32Array.of(0, 1)])
    expect(index.records).toBe(2)
    expect(index.bytes).toBe(bytes)
    expect(index.search(Float32Array.of(0, 1), 1)[0]!.record.id).toBe('a2')
  })
})

describe('vector index memory', () => {
  it('doubles while growing and trims to the slots in use', () => {
    const index = new VectorIndex(4, 1)
    const vectors = Array.from({ length: 65 }, (_, i) => Float32Array.of(i + 1, 1, 0, 0))
    const chunks = vectors.map((_, i) => ({
      id: `c${i}`,
      startByte: i,
      endByte: i + 1,
      startLine: i + 1,
      endLine: i + 1,
      text: 'x',
    }))
    index.publish('f', 'd', chunks, vectors)
    expect(index.bytes).toBe(128 * 4 * 4)
    index.trim()
    expect(index.bytes).toBe(65 * 4 * 4)
    expect(index.search(Float32Array.of(65, 1, 0, 0), 1)[0]!.record.id).toBe('c64')
    index.publish('g', 'd', [chunks[0]!], [vectors[0]!]) // grows again after a trim
    expect(index.records).toBe(66)
    expect(index.file('g')![0]!.slot).toBe(65)
  })
})

describe('embedding calls', () => {
  it('leave no listener on the index signal behind (thousands of calls share it)', async () => {
    const controller = new AbortController()
    const model = {
      provider: 'p',
      model: 'm',
      dimension: 2,
      normalization: 'none' as const,
      embed: async (inputs: readonly { id: string }[]) => ({
        vectors: inputs.map(({ id }) => ({ id, values: [1, 0] })),
      }),
    }
    for (let i = 0; i < 50; i++)
      await embedBatch(model, [{ id: `x${i}`, text: 't' }], RETRIEVAL_DEFAULTS, controller.signal)
    const failing = { ...model, embed: async () => Promise.reject(new Error('400 invalid input')) }
    await expect(
      embedBatch(failing, [{ id: 'y', text: 't' }], RETRIEVAL_DEFAULTS, controller.signal),
    ).rejects.toThrow()
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })
})

describe('answer checks', () => {
  const inputs = [
    { id: 'a', text: 'x' },
    { id: 'b', text: 'y' },
  ]
  it.each([
    ['missing id', [{ id: 'a', values: [1] }], /no vector for id b/],
    [
      'duplicate id',
      [
        { id: 'a', values: [1] },
        { id: 'a', values: [1] },
      ],
      /twice/,
    ],
    [
      'unknown id',
      [
        { id: 'a', values: [1] },
        { id: 'z', values: [1] },
      ],
      /unknown id/,
    ],
    [
      'wrong dimension',
      [
        { id: 'a', values: [1, 2] },
        { id: 'b', values: [1] },
      ],
      /2 dimensions/,
    ],
    [
      'NaN',
      [
        { id: 'a', values: [Number.NaN] },
        { id: 'b', values: [1] },
      ],
      /non-finite/,
    ],
  ])('%s is a typed invalid_response', (_name, vectors, message) => {
    let error: unknown
    try {
      checkEmbeddingAnswer(inputs, { vectors }, 1)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(IsoagentError)
    expect((error as IsoagentError).data.kind).toBe('invalid_response')
    expect((error as IsoagentError).message).toMatch(message)
  })
})

describe('openAICompatibleEmbeddings', () => {
  let fake: FakeEmbeddings
  beforeAll(async () => {
    fake = await startFakeEmbeddings()
  })
  afterAll(async () => {
    await fake.close()
  })
  const signal = new AbortController().signal
  const inputs = [
    { id: 'p', text: 'shutdown' },
    { id: 'q', text: 'database' },
  ]

  it('maps floats and base64 answers back to ids, and learns the dimension', async () => {
    const floats = openAICompatibleEmbeddings({ baseURL: fake.url, model: 'm' })
    expect(floats.dimension).toBe(0)
    const a = await floats.embed(inputs, { signal })
    expect(floats.dimension).toBe(FAKE_DIMENSION)
    const b64 = openAICompatibleEmbeddings({
      baseURL: fake.url,
      model: 'm',
      encodingFormat: 'base64',
      dimensions: FAKE_DIMENSION,
    })
    const b = await b64.embed(inputs, { signal })
    expect(a.vectors.map((v) => v.id)).toEqual(['p', 'q'])
    expect(Array.from(b.vectors[0]!.values)).toEqual(Array.from(a.vectors[0]!.values))
    expect(a.vectors[0]!.values[0]).toBe(1)
  })

  it('types 429 (with Retry-After), 400 and a dead server', async () => {
    const model = openAICompatibleEmbeddings({ baseURL: fake.url, model: 'm' })
    fake.behaviour = { rateLimited: 1 }
    await expect(model.embed(inputs, { signal })).rejects.toMatchObject({
      code: 'rate_limited',
      data: { kind: 'rate_limited', retry_after_ms: 0 },
    })
    fake.behaviour = { rejectText: 'shutdown' }
    await expect(model.embed(inputs, { signal })).rejects.toMatchObject({
      data: { kind: 'rejected' },
    })
    fake.behaviour = {}
    const dead = openAICompatibleEmbeddings({ baseURL: 'http://127.0.0.1:1/v1', model: 'm' })
    await expect(dead.embed(inputs, { signal })).rejects.toMatchObject({
      data: { kind: 'unavailable' },
    })
    expect(() => openAICompatibleEmbeddings({ baseURL: 'ftp://x', model: 'm' })).toThrow(/baseURL/)
    expect(() =>
      openAICompatibleEmbeddings({ baseURL: fake.url, model: 'm', dimensions: 0 }),
    ).toThrow(/dimensions/)
  })
})
