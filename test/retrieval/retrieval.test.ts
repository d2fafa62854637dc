// Semantic retrieval end to end: a session over a memory (and a local) workspace with an
// embedder speaking the OpenAI wire protocol on loopback (fake-embeddings.ts).
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  Agent,
  memoryWorkspace,
  openAICompatibleEmbeddings,
  type RetrievalOptions,
  type Session,
} from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import { FAKE_DIMENSION, startFakeEmbeddings, type FakeEmbeddings } from './fake-embeddings.ts'

let fake: FakeEmbeddings
beforeAll(async () => {
  fake = await startFakeEmbeddings()
})
afterAll(async () => {
  await fake.close()
})
afterEach(() => {
  fake.behaviour = {}
  fake.inputs.length = 0
  fake.statuses.length = 0
  fake.requestSizes.length = 0
})

const SERVER = [
  'export function stopServer(server) {',
  '  // teardown: release every socket, then dispose the listener',
  '  server.listener.dispose()',
  '}',
  '',
].join('\n')
const FILES: Record<string, string> = {
  'src/server.ts': SERVER,
  'src/colors.ts': 'export const palette = ["red", "green"] // paint hue table\n',
  'src/db.ts': 'export function openDatabase() { return sql.table("rows") }\n',
  'README.md': '# Demo\nA small demo project about colour and database rows.\n',
}

type Extra = Partial<RetrievalOptions> & { dimensions?: number }
function embedder(extra: Extra = {}) {
  return openAICompatibleEmbeddings({
    baseURL: fake.url,
    model: 'fake-embed',
    ...(extra.dimensions === undefined
      ? { dimensions: FAKE_DIMENSION }
      : { dimensions: extra.dimensions }),
  })
}

async function open(files: Record<string, string>, extra: Extra = {}): Promise<Session> {
  const { dimensions: _d, ...retrieval } = extra
  return Agent.create().session(memoryWorkspace(files), {
    retrieval: { embeddings: embedder(extra), readinessTimeoutMs: 10_000, ...retrieval },
  })
}

async function search(session: Session, args: Record<string, unknown>, signal?: AbortSignal) {
  return session.tool('search', args, signal ? { signal } : {})
}

async function settled(session: Session): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (session.retrievalStatus()?.phase !== 'building') return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error('the index never settled')
}

type Hit = {
  path: string
  chunk_id: string
  digest_verified: boolean
  exact_identifier?: boolean
  channels?: Record<string, number>
}
const results = (r: { metadata?: Record<string, unknown> }) => r.metadata!.results as Hit[]

describe('semantic mode', () => {
  it('finds by meaning the chunk grep and bm25 miss', async () => {
    const session = await open(FILES)
    const grep = await session.tool('search', { mode: 'grep', query: 'shutdown' })
    expect(grep.output).not.toContain('server.ts')
    const bm25 = await session.tool('search', { mode: 'bm25', query: 'shutdown' })
    expect(bm25.output).not.toContain('server.ts')
    const r = await search(session, { mode: 'semantic', query: 'shutdown' })
    expect(r.exitCode).toBe(0)
    expect(results(r)[0]).toMatchObject({ path: 'src/server.ts', digest_verified: true })
    expect(r.output).toMatch(
      /^1\. src\/server\.ts:1-4 \(score 0\.\d{4}\)\n {5}1\texport function stopServer/,
    )
    expect(r.metadata).toMatchObject({
      mode: 'semantic',
      algorithm: 'exact_cosine',
      fallback: null,
    })
    expect(session.retrievalStatus()).toMatchObject({
      phase: 'ready',
      eligibleFiles: 4,
      indexedFiles: 4,
      indexedChunks: 4,
      coverageBps: 10000,
      queueDepth: 0,
      failedFiles: 0,
      vectorRecords: 4,
      model: { provider: 'openai-compatible', model: 'fake-embed', dimension: FAKE_DIMENSION },
    })
    expect(session.retrievalStatus()!.vectorBytes).toBeGreaterThanOrEqual(4 * FAKE_DIMENSION * 4)
    await session.close()
  })

  it('applies path and include filters', async () => {
    const session = await open({ ...FILES, 'lib/close.ts': 'export const closeAll = 1 // close\n' })
    const r = await search(session, { mode: 'semantic', query: 'shutdown', path: 'lib' })
    expect(results(r).map((h) => h.path)).toEqual(['lib/close.ts'])
    const inc = await search(session, { mode: 'semantic', query: 'shutdown', include: '*.md' })
    expect(results(inc).every((h) => h.path === 'README.md')).toBe(true)
    await session.close()
  })

  it('works over a local workspace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'isoagent-retrieval-'))
    try {
      mkdirSync(join(dir, 'src'))
      for (const [p, text] of Object.entries(FILES)) writeFileSync(join(dir, p), text)
      const session = await Agent.create().session(localWorkspace(dir), {
        retrieval: { embeddings: embedder(), readinessTimeoutMs: 10_000 },
      })
      const r = await search(session, { mode: 'semantic', query: 'terminate', limit: 1 })
      expect(results(r)).toHaveLength(1)
      expect(results(r)[0]!.path).toBe('src/server.ts')
      writeFileSync(join(dir, 'src/server.ts'), 'export const nothing = 0\n')
      const stale = await search(session, { mode: 'semantic', query: 'terminate', limit: 1 })
      expect(stale.metadata!.fallback).toBe('filtered_stale_hits')
      expect(results(stale).some((h) => h.path === 'src/server.ts')).toBe(false)
      await session.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('hybrid mode', () => {
  it('puts an exact identifier first whatever the other channels say', async () => {
    const files = {
      'a/decoy.ts':
        'function readconfignow() {\n  // read config now: read the config now, config settings now\n}\n',
      'b/more.md': 'config parsing options: read the configuration settings now\n',
      'c/impl.ts': 'zz qq readConfigNow() ww\n',
    }
    const session = await open(files)
    const r = await search(session, { mode: 'hybrid', query: 'readConfigNow' })
    expect(r.exitCode).toBe(0)
    expect(results(r)[0]).toMatchObject({
      path: 'c/impl.ts',
      exact_identifier: true,
      digest_verified: true,
    })
    expect(r.metadata).toMatchObject({
      mode: 'hybrid',
      algorithm: 'rrf_k60',
      channels: { symbol: 'tree_sitter' }, // the Node default (adapters/node is imported)
    })
    expect(r.output).toMatch(/^1\. c\/impl\.ts:1-1 \(rrf 0\.\d{5}; exact#1/)
    // the decoy outscores it on fused score (more channels), yet the identifier comes first
    const [impl, decoy] = r.metadata!.results as { path: string; fused_score: number }[]
    expect(decoy!.path).toBe('a/decoy.ts')
    expect(decoy!.fused_score).toBeGreaterThan(impl!.fused_score)
    await session.close()
  })

  it('answers from the other channels when the embedder fails the query', async () => {
    const session = await open(FILES)
    await settled(session)
    fake.behaviour.rejectText = 'openDatabase'
    const r = await search(session, { mode: 'hybrid', query: 'openDatabase' })
    expect(r.exitCode).toBe(0)
    expect(r.metadata).toMatchObject({ channels: { semantic: 'unavailable' } })
    expect(results(r)[0]).toMatchObject({ path: 'src/db.ts', exact_identifier: true })
    expect(r.output).toContain('[semantic channel unavailable:')
    const semantic = await search(session, { mode: 'semantic', query: 'openDatabase' })
    expect(semantic.exitCode).toBe(1)
    await session.close()
  })

  it('keeps at most 2 chunks per file', async () => {
    const many = Array.from(
      { length: 400 },
      (_, i) => `const close${i} = teardown() // shutdown`,
    ).join('\n')
    const session = await open({ 'big.ts': many, 'small.ts': 'shutdown now\n' })
    const r = await search(session, { mode: 'hybrid', query: 'shutdown', limit: 25 })
    const perPath = new Map<string, number>()
    for (const h of results(r)) perPath.set(h.path, (perPath.get(h.path) ?? 0) + 1)
    expect(perPath.get('big.ts')).toBe(2)
    expect(perPath.get('small.ts')).toBe(1)
    await session.close()
  })

  it('finds definitions in the symbol channel', async () => {
    const session = await open({
      'x.py': 'def load_things():\n    pass\n',
      'y.py': 'load_things()\n',
    })
    const r = await search(session, { mode: 'hybrid', query: 'load_things' })
    const first = results(r)[0]!
    expect(first.path).toBe('x.py')
    expect(first.channels).toMatchObject({ symbol: 1 })
    await session.close()
  })
})

describe('index lifecycle', () => {
  it('drops a stale hit after an edit and re-indexes the file', async () => {
    const session = await open(FILES)
    await search(session, { mode: 'semantic', query: 'shutdown' })
    await session.writeFile('src/server.ts', 'export const answer = 42\n')
    const stale = await search(session, { mode: 'semantic', query: 'shutdown' })
    expect(stale.metadata!.fallback).toBe('filtered_stale_hits')
    expect(results(stale).some((h) => h.path === 'src/server.ts')).toBe(false)
    await settled(session)
    fake.inputs.length = 0
    await session.writeFile('src/db.ts', 'export function shutdownDatabase() {}\n')
    await search(session, { mode: 'semantic', query: 'shutdown' }) // stale: re-queued
    await settled(session)
    expect(fake.inputs.some((t) => t.includes('shutdownDatabase'))).toBe(true)
    const fresh = await search(session, { mode: 'semantic', query: 'shutdown' })
    expect(fresh.metadata!.fallback).toBe(null)
    expect(results(fresh)[0]!.path).toBe('src/db.ts')
    await session.close()
  })

  it('re-queues a file that changes while it is being embedded', async () => {
    fake.behaviour.delayMs = 300
    const session = await open(
      { 'a.ts': 'export const OLD_TEXT = 1 // database\n' },
      { readinessTimeoutMs: 0 },
    )
    await new Promise((r) => setTimeout(r, 100)) // the first embedding call is in flight
    await session.writeFile('a.ts', 'export const NEW_TEXT = 2 // shutdown\n')
    fake.behaviour.delayMs = 0
    await settled(session)
    expect(fake.inputs.some((t) => t.includes('OLD_TEXT'))).toBe(true)
    expect(fake.inputs.some((t) => t.includes('NEW_TEXT'))).toBe(true)
    const r = await search(session, { mode: 'semantic', query: 'shutdown' })
    expect(r.metadata!.fallback).toBe(null)
    expect(r.output).toContain('NEW_TEXT')
    expect(session.retrievalStatus()).toMatchObject({
      phase: 'ready',
      indexedFiles: 1,
      indexedChunks: 1,
    })
    await session.close()
  })

  it('packs small files into shared embedding calls (≤ 64 inputs each)', async () => {
    const files = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`f${i}.ts`, `export const v${i} = ${i}\n`]),
    )
    const session = await open(files)
    await settled(session)
    expect(session.retrievalStatus()).toMatchObject({ phase: 'ready', indexedFiles: 100 })
    expect(fake.inputs).toHaveLength(100)
    expect(fake.requestSizes.length).toBeLessThan(50)
    expect(Math.max(...fake.requestSizes)).toBeLessThanOrEqual(64)
    await session.close()
  })

  it('fails a file alone (degraded) and never sends excluded paths', async () => {
    fake.behaviour.rejectText = 'POISON'
    const session = await open({
      ...FILES,
      'bad.ts': 'POISON shutdown\n',
      '.env': 'SECRET_ENV_TEXT=1\n',
      'server.key': 'PRIVATE_KEY_TEXT\n',
      id_rsa: 'RSA_KEY_TEXT\n',
      'credentials.json': 'CREDENTIALS_TEXT\n',
      'node_modules/pkg/index.js': 'NODE_MODULES_TEXT shutdown\n',
      'dist/out.js': 'DIST_TEXT shutdown\n',
      'config.sample': 'SAMPLE_ALLOWED_TEXT\n',
    })
    await settled(session)
    expect(session.retrievalStatus()).toMatchObject({
      phase: 'degraded',
      failedFiles: 1,
      indexedFiles: 5,
    })
    const sent = fake.inputs.join('\n')
    for (const secret of [
      'SECRET_ENV_TEXT',
      'PRIVATE_KEY_TEXT',
      'RSA_KEY_TEXT',
      'CREDENTIALS_TEXT',
      'NODE_MODULES_TEXT',
      'DIST_TEXT',
    ])
      expect(sent).not.toContain(secret)
    expect(sent).toContain('SAMPLE_ALLOWED_TEXT')
    const r = await search(session, { mode: 'semantic', query: 'shutdown' })
    expect(r.exitCode).toBe(0)
    expect(results(r)[0]!.path).toBe('src/server.ts')
    await session.close()
  })

  it('answers at once while building with readinessTimeoutMs 0 (fallback building)', async () => {
    fake.behaviour.delayMs = 300
    const session = await open(FILES, { readinessTimeoutMs: 0 })
    fake.behaviour.delayMs = 0
    const r = await search(session, { mode: 'semantic', query: 'shutdown' })
    expect(r.exitCode).toBe(0)
    expect(r.metadata).toMatchObject({ fallback: 'building', status: { phase: 'building' } })
    await session.close()
  })

  it('a cancelled call stops waiting for readiness', async () => {
    fake.behaviour.hang = true
    const session = await open(FILES, { readinessTimeoutMs: 30_000 })
    const controller = new AbortController()
    const started = Date.now()
    setTimeout(() => controller.abort(), 50)
    const r = await search(session, { mode: 'semantic', query: 'shutdown' }, controller.signal)
    expect(r.exitCode).toBe(1)
    expect(r.errorKind?.type).toBe('cancelled')
    expect(Date.now() - started).toBeLessThan(5000)
    await session.close()
  })

  it('frees the index on close (status closed)', async () => {
    const session = await open(FILES)
    await settled(session)
    expect(session.retrievalStatus()!.vectorRecords).toBe(4)
    await session.close()
    expect(session.retrievalStatus()).toMatchObject({
      phase: 'closed',
      vectorRecords: 0,
      vectorBytes: 0,
      indexedChunks: 0,
    })
  })
})

describe('bad input and a misbehaving embedder', () => {
  it('refuses a 70 KiB query, limit 0 and 26 with typed results', async () => {
    const session = await open(FILES)
    for (const args of [
      { mode: 'semantic', query: 'x'.repeat(70 * 1024) },
      { mode: 'semantic', query: 'é'.repeat(1500) },
      { mode: 'semantic', query: 'shutdown', limit: 0 },
      { mode: 'hybrid', query: 'shutdown', limit: 26 },
      { mode: 'semantic', query: 'shutdown', cursor: 'abc' },
    ]) {
      const r = await search(session, args)
      expect(r.exitCode, JSON.stringify(args).slice(0, 80)).toBe(1)
      expect(r.errorKind?.type).toBe('invalid_argument')
    }
    await session.close()
  })

  it('without retrieval the modes are not in the schema and a call says why', async () => {
    const session = await Agent.create().session(memoryWorkspace(FILES))
    const def = session.toolDefinitions().find((d) => d.name === 'search')!
    expect(JSON.stringify(def)).not.toContain('semantic')
    const r = await search(session, { mode: 'semantic', query: 'shutdown' })
    expect(r.exitCode).toBe(1)
    expect(r.output).toContain(
      "mode='semantic' is unavailable because this session did not enable semantic retrieval",
    )
    expect(session.retrievalStatus()).toBeUndefined()
    const enabled = await open(FILES)
    const on = enabled.toolDefinitions().find((d) => d.name === 'search')!
    expect(JSON.stringify(on)).toContain('"hybrid"')
    await enabled.close()
    await session.close()
  })

  it('an embedder answering the wrong dimensions fails its files (degraded), typed', async () => {
    fake.behaviour.dimensions = 7
    const session = await open(FILES)
    await settled(session)
    expect(session.retrievalStatus()).toMatchObject({
      phase: 'degraded',
      failedFiles: 4,
      indexedFiles: 0,
    })
    const r = await search(session, { mode: 'semantic', query: 'shutdown' })
    expect(r.exitCode).toBe(1)
    expect(r.output).toContain('7 dimensions')
    await session.close()
  })

  it('NaN in an answer is refused', async () => {
    fake.behaviour.nan = true
    const session = await open({ 'a.ts': 'shutdown\n' })
    await settled(session)
    expect(session.retrievalStatus()).toMatchObject({ phase: 'degraded', failedFiles: 1 })
    await session.close()
  })

  it('429 then success: retried after Retry-After', async () => {
    fake.behaviour.rateLimited = 2
    const session = await open({ 'a.ts': 'shutdown\n' })
    await settled(session)
    expect(fake.statuses.slice(0, 3)).toEqual([429, 429, 200])
    expect(session.retrievalStatus()).toMatchObject({ phase: 'ready', indexedFiles: 1 })
    await session.close()
  })

  it('a hung embedder meets the deadline: the file fails, the query is a typed timeout', async () => {
    fake.behaviour.hang = 'HANG'
    const session = await open(
      { 'a.ts': 'HANG here\n', 'b.ts': 'shutdown\n' },
      { limits: { embedTimeoutMs: 150, retryDelayMs: 0 } },
    )
    await settled(session)
    expect(session.retrievalStatus()).toMatchObject({
      phase: 'degraded',
      failedFiles: 1,
      indexedFiles: 1,
    })
    const r = await search(session, { mode: 'semantic', query: 'HANG' })
    expect(r.exitCode).toBe(1)
    expect(r.errorKind?.type).toBe('timeout')
    await session.close()
  })

  it('refuses bad retrieval options', async () => {
    const agent = Agent.create()
    await expect(
      agent.session(memoryWorkspace({}), {
        retrieval: { embeddings: embedder(), readinessTimeoutMs: 30_001 },
      }),
    ).rejects.toThrow(/readinessTimeoutMs/)
    await expect(
      agent.session(memoryWorkspace({}), {
        retrieval: { embeddings: embedder(), limits: { batchInputs: 65 } },
      }),
    ).rejects.toThrow(/batchInputs/)
  })
})
