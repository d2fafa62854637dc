// The Worker as wrangler bundles it, in workerd (Miniflare), with semantic retrieval from an
// OpenAI-compatible endpoint named by EMBEDDINGS_URL / EMBEDDINGS_MODEL: the loopback fake
// embeddings server, reached by workerd's own outbound fetch. Indexes an R2 workspace and
// answers semantic and hybrid searches over HTTP with verified hits; hybrid's symbol channel is
// tree-sitter (the grammars wrangler bundled), not the regex fallback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  buildWorker,
  runWorker,
  type RunningWorker,
  type WorkerBundle,
} from '../http/worker-bundle.ts'
import { FAKE_DIMENSION, startFakeEmbeddings, type FakeEmbeddings } from './fake-embeddings.ts'

const TOKEN = 'http-embeddings-token'

const FILES: Record<string, string> = {
  'src/server.ts':
    'export function stopServer(server) {\n  // teardown: release every socket\n  server.listener.dispose()\n}\n',
  'src/db.ts': 'export function openDatabase() { return sql.table("rows") }\n',
  'README.md': '# Demo\nA small demo project about colour and database rows.\n',
  // A class method the regex cannot see, and a comment the regex would take for a definition.
  'src/shop.ts': 'export class Shop {\n  restock(count: number) {\n    return count\n  }\n}\n',
  'src/notes.ts': '// the function restock moved to Shop\nexport const note = 1\n',
  '.env': 'SECRET_TOKEN=do-not-embed-me\n',
  'node_modules/x/index.js': 'module.exports = "never embedded either"\n',
}

type Json = Record<string, unknown>
interface ToolAnswer {
  exitCode: number
  output: string
  metadata: Json
}

describe('Worker with EMBEDDINGS_URL (workerd, loopback OpenAI-compatible fake)', () => {
  let bundle: WorkerBundle
  let worker: RunningWorker
  let fake: FakeEmbeddings
  let id: string
  let status: Json

  const api = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${worker.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    })
    return { status: res.status, body: (await res.json()) as Json }
  }
  const search = async (args: Json): Promise<ToolAnswer> => {
    const r = await api(`/v1/sessions/${id}/tools/search`, {
      method: 'POST',
      body: JSON.stringify({ args }),
    })
    expect(r.status).toBe(200)
    return r.body as unknown as ToolAnswer
  }

  beforeAll(async () => {
    ;[bundle, fake] = await Promise.all([buildWorker(), startFakeEmbeddings()])
    worker = await runWorker(
      bundle,
      {
        ISOAGENT_TOKEN: TOKEN,
        EMBEDDINGS_URL: fake.url,
        EMBEDDINGS_MODEL: 'fake-embed',
        EMBEDDINGS_KEY: 'sk-embed',
        EMBEDDINGS_DIMENSIONS: String(FAKE_DIMENSION),
      },
      { r2: true },
    )
    const bucket = await worker.mf.getR2Bucket('BUCKET')
    for (const [key, text] of Object.entries(FILES)) await bucket.put(key, text)
    const opened = await api('/v1/sessions', { method: 'POST', body: '{}' })
    expect(opened.status).toBe(201)
    id = opened.body.id as string
    for (let i = 0; i < 1500; i++) {
      status = (await api(`/v1/sessions/${id}/retrieval`)).body
      if (status.phase !== 'building') break
      await new Promise((r) => setTimeout(r, 20))
    }
  }, 300_000)

  afterAll(async () => {
    await worker?.close()
    await fake?.close()
    bundle?.remove()
  })

  it('indexes through the HTTP embedder from inside workerd', () => {
    expect(status).toMatchObject({
      phase: 'ready',
      eligibleFiles: 5,
      indexedFiles: 5,
      failedFiles: 0,
      model: { provider: 'openai-compatible', model: 'fake-embed', dimension: FAKE_DIMENSION },
    })
    expect(fake.statuses.length).toBeGreaterThan(0)
    expect(fake.statuses.every((s) => s === 200)).toBe(true)
  })

  it('answers semantic and hybrid searches with verified hits', async () => {
    const before = fake.inputs.length
    const semantic = await search({ mode: 'semantic', query: 'shutdown' })
    expect(semantic.exitCode).toBe(0)
    expect(semantic.metadata.mode).toBe('semantic')
    expect((semantic.metadata.results as Json[])[0]).toMatchObject({
      path: 'src/server.ts',
      digest_verified: true,
    })
    // The query itself was embedded by the fake, over workerd's outbound fetch.
    expect(fake.inputs.slice(before)).toContain('shutdown')
    const hybrid = await search({ mode: 'hybrid', query: 'openDatabase' })
    expect(hybrid.exitCode).toBe(0)
    expect(hybrid.metadata.channels).toMatchObject({ semantic: 'ok' })
    expect((hybrid.metadata.results as Json[])[0]).toMatchObject({
      path: 'src/db.ts',
      exact_identifier: true,
    })
  })

  it('reads definitions with the bundled tree-sitter: a TS class method, not a comment', async () => {
    const hybrid = await search({ mode: 'hybrid', query: 'restock' })
    expect(hybrid.exitCode).toBe(0)
    expect(hybrid.metadata.channels).toMatchObject({ symbol: 'tree_sitter' })
    const bySymbol = (hybrid.metadata.results as { path: string; channels: Json }[]).filter(
      (h) => h.channels.symbol !== undefined,
    )
    expect(bySymbol.map((h) => h.path)).toEqual(['src/shop.ts'])
  })

  it('never sends excluded files to the endpoint', () => {
    const sent = fake.inputs.join('\n')
    expect(sent).toContain('stopServer')
    expect(sent).not.toMatch(/do-not-embed-me|never embedded either/)
  })
})
