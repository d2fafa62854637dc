// The Worker as wrangler bundles it, in workerd (Miniflare), with semantic retrieval from a
// Workers AI binding: `AI` is a service binding to a second worker whose `FakeAI` entrypoint
// answers `run(model, { text })` over JS RPC as Workers AI does (`{ shape, data }`), embedding
// with the concept table, recording every input, and misbehaving on marker words.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Plugin } from 'esbuild'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, embeddingsFromEnv, type WorkerEnv } from '../../edge/cloudflare/env.ts'
import { COMPATIBILITY_DATE, buildWorker, type WorkerBundle } from '../http/worker-bundle.ts'
import { bundle } from '../runtime/bundle.ts'

const MODEL = '@cf/baai/bge-small-en-v1.5'
const TOKEN = 'ai-test-token'

const FAKE_AI = `
import { WorkerEntrypoint } from 'cloudflare:workers'
import { embedText } from './concept-embedding.ts'

const seen = []
const never = new Promise(() => {})

export class FakeAI extends WorkerEntrypoint {
  async run(model, inputs) {
    const text = inputs.text
    seen.push(...text)
    if (model !== '${MODEL}') throw new Error('5007: No such model ' + model)
    if (text.some((t) => t.includes('CAPACITY')))
      throw new Error('3040: Capacity temporarily exceeded, please try again.')
    if (text.some((t) => t.includes('BOOM'))) throw new Error('InferenceUpstreamError: internal')
    if (text.some((t) => t.includes('HANG'))) return never
    const data = text.map((t) => {
      const v = embedText(t).concat(new Array(${384 - 32}).fill(0))
      if (t.includes('NANVEC')) v[1] = NaN
      if (t.includes('INFVEC')) v[2] = Infinity
      return t.includes('WRONGDIM') ? v.slice(0, 100) : v
    })
    return { shape: [data.length, data[0]?.length ?? 0], data }
  }
}

export default {
  async fetch() {
    return Response.json(seen)
  },
}
`

const FILES: Record<string, string> = {
  'src/server.ts':
    'export function stopServer(server) {\n  // teardown: release every socket\n  server.listener.dispose()\n}\n',
  'src/db.ts': 'export function openDatabase() { return sql.table("rows") }\n',
  'README.md': '# Demo\nA small demo project about colour and database rows.\n',
  'bad/busy.ts': 'export const busy = "CAPACITY"\n',
  '.env': 'SECRET_TOKEN=do-not-embed-me\n',
  'node_modules/x/index.js': 'module.exports = "never embedded either"\n',
}

const cloudflareExternal: Plugin = {
  name: 'cloudflare-external',
  setup(b) {
    b.onResolve({ filter: /^cloudflare:/ }, (args) => ({ path: args.path, external: true }))
  },
}

type Json = Record<string, unknown>

describe('Worker with a Workers AI binding (workerd, fake AI over a service binding)', () => {
  let worker: WorkerBundle
  let mf: Miniflare
  let url: string
  let id: string
  let status: Json

  const api = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    })
    return { status: res.status, body: (await res.json()) as Json }
  }
  const search = async (args: Json) => {
    const r = await api(`/v1/sessions/${id}/tools/search`, {
      method: 'POST',
      body: JSON.stringify({ args }),
    })
    expect(r.status).toBe(200)
    return r.body as {
      exitCode: number
      output: string
      errorKind?: { type: string }
      metadata: Json
    }
  }

  beforeAll(async () => {
    const [built, fakeScript] = await Promise.all([
      buildWorker(),
      bundle(
        { contents: FAKE_AI, resolveDir: import.meta.dirname, target: 'workerd' },
        { plugins: [cloudflareExternal] },
      ),
    ])
    worker = built
    mf = new Miniflare({
      host: '127.0.0.1',
      port: 0,
      cf: false,
      telemetry: { enabled: false },
      workers: [
        {
          name: 'isoagent',
          modules: [
            {
              type: 'ESModule',
              path: worker.script,
              contents: readFileSync(worker.script, 'utf8'),
            },
            ...readdirSync(worker.dir)
              .filter((f) => f.endsWith('-wasm') || f.endsWith('.wasm'))
              .map((f) => ({
                type: 'CompiledWasm' as const,
                path: join(worker.dir, f),
                contents: readFileSync(join(worker.dir, f)),
              })),
          ],
          modulesRoot: worker.dir,
          compatibilityDate: COMPATIBILITY_DATE,
          durableObjects: { SESSIONS: 'IsoagentSession', REGISTRY: 'IsoagentRegistry' },
          r2Buckets: ['BUCKET'],
          bindings: { ISOAGENT_TOKEN: TOKEN, EMBEDDINGS_MODEL: MODEL },
          serviceBindings: { AI: { name: 'fake-ai', entrypoint: 'FakeAI' } },
        },
        { name: 'fake-ai', modules: true, script: fakeScript, compatibilityDate: '2026-04-01' },
      ],
    })
    url = (await mf.ready).toString().replace(/\/$/, '')
    const bucket = await mf.getR2Bucket('BUCKET', 'isoagent')
    for (const [key, text] of Object.entries(FILES)) await bucket.put(key, text)
    const opened = await api('/v1/sessions', { method: 'POST', body: '{}' })
    expect(opened.status).toBe(201)
    id = opened.body.id as string
    for (let i = 0; i < 600; i++) {
      status = (await api(`/v1/sessions/${id}/retrieval`)).body
      if (status.phase !== 'building') break
      await new Promise((r) => setTimeout(r, 20))
    }
  }, 300_000)

  afterAll(async () => {
    await mf?.dispose()
    worker?.remove()
  })

  it('indexes through ai.run; a file the provider keeps refusing fails alone', () => {
    expect(status).toMatchObject({
      phase: 'degraded',
      eligibleFiles: 4,
      indexedFiles: 3,
      failedFiles: 1,
      model: { provider: 'workers-ai', model: MODEL, dimension: 384 },
    })
  })

  it('answers semantic and hybrid searches with verified hits', async () => {
    const semantic = await search({ mode: 'semantic', query: 'shutdown' })
    expect(semantic.exitCode).toBe(0)
    expect((semantic.metadata.results as Json[])[0]).toMatchObject({
      path: 'src/server.ts',
      digest_verified: true,
    })
    const hybrid = await search({ mode: 'hybrid', query: 'stopServer' })
    expect(hybrid.exitCode).toBe(0)
    expect(hybrid.metadata.channels).toMatchObject({ semantic: 'ok', symbol: 'tree_sitter' })
    expect((hybrid.metadata.results as Json[])[0]).toMatchObject({
      path: 'src/server.ts',
      exact_identifier: true,
    })
  })

  it('never sends excluded files to the provider', async () => {
    const seen = (await (await mf.getWorker('fake-ai')).fetch('http://fake/')).json()
    const inputs = (await seen) as string[]
    expect(inputs.some((t) => t.includes('stopServer'))).toBe(true)
    expect(inputs.join('\n')).not.toMatch(/do-not-embed-me|never embedded either/)
  })

  it('types a provider that is down or at capacity, refuses NaN, Infinity and wrong dimensions', async () => {
    const cases: [string, string][] = [
      ['BOOM', 'transport'], // unavailable: after the retries
      ['CAPACITY', 'rate_limited'],
      ['NANVEC', 'non-finite'],
      ['INFVEC', 'non-finite'],
      ['WRONGDIM', '100 dimensions'],
    ]
    for (const [query, expected] of cases) {
      const r = await search({ mode: 'semantic', query })
      expect(r.exitCode, query).toBe(1)
      expect(`${r.errorKind?.type} ${r.output}`, query).toContain(expected)
      // hybrid still answers from the other channels
      const h = await search({ mode: 'hybrid', query: `${query} stopServer` })
      expect(h.exitCode, query).toBe(0)
      expect(h.metadata.channels, query).toMatchObject({ semantic: 'unavailable' })
    }
  })

  it('reads EMBEDDINGS_* settings: bad combinations are ConfigErrors', () => {
    const ai = { run: () => Promise.resolve({}) }
    const base = {} as WorkerEnv
    expect(embeddingsFromEnv(base)).toBeUndefined()
    expect(embeddingsFromEnv({ ...base, AI: ai })).toBeUndefined()
    expect(() => embeddingsFromEnv({ ...base, EMBEDDINGS_MODEL: MODEL })).toThrow(ConfigError)
    expect(() => embeddingsFromEnv({ ...base, EMBEDDINGS_URL: 'http://127.0.0.1:9/v1' })).toThrow(
      /EMBEDDINGS_MODEL/,
    )
    expect(() =>
      embeddingsFromEnv({ ...base, EMBEDDINGS_MODEL: MODEL, AI: ai, EMBEDDINGS_DIMENSIONS: 'x' }),
    ).toThrow(/EMBEDDINGS_DIMENSIONS/)
    expect(embeddingsFromEnv({ ...base, EMBEDDINGS_MODEL: MODEL, AI: ai })).toMatchObject({
      provider: 'workers-ai',
      dimension: 384,
    })
    expect(
      embeddingsFromEnv({
        ...base,
        EMBEDDINGS_URL: 'http://127.0.0.1:9/v1',
        EMBEDDINGS_MODEL: 'm',
      }),
    ).toMatchObject({ provider: 'openai-compatible', model: 'm' })
  })
})
