// fromAISDKEmbeddings over an AI SDK EmbeddingModelV3 whose doEmbed speaks to the loopback
// embeddings fake (errors as the SDK's own APICallError), used by a session and by `ai`'s
// embedMany (so the object is a real V3 model).
import { APICallError, type EmbeddingModelV3 } from '@ai-sdk/provider'
import { embedMany } from 'ai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace } from '../../adapters/index.ts'
import { fromAISDKEmbeddings } from '../../adapters/ai-sdk/index.ts'
import { startFakeEmbeddings, type FakeEmbeddings } from './fake-embeddings.ts'

let fake: FakeEmbeddings
beforeAll(async () => {
  fake = await startFakeEmbeddings()
})
afterAll(async () => {
  await fake.close()
})

function v3(): EmbeddingModelV3 {
  return {
    specificationVersion: 'v3',
    provider: 'fake',
    modelId: 'fake-embed',
    maxEmbeddingsPerCall: 64,
    supportsParallelCalls: true,
    async doEmbed({ values, abortSignal }) {
      const url = `${fake.url}/embeddings`
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fake-embed', input: values }),
        ...(abortSignal ? { signal: abortSignal } : {}),
      })
      const text = await res.text()
      if (!res.ok)
        throw new APICallError({
          message: text,
          url,
          requestBodyValues: {},
          statusCode: res.status,
          responseHeaders: Object.fromEntries(res.headers),
          responseBody: text,
        })
      const json = JSON.parse(text) as { data: { embedding: number[] }[] }
      return { embeddings: json.data.map((d) => d.embedding), warnings: [] }
    },
  }
}

describe('fromAISDKEmbeddings', () => {
  it('gives a session semantic search, and the same model works with embedMany', async () => {
    const model = v3()
    const viaAi = await embedMany({ model, values: ['close', 'table'] })
    expect(viaAi.embeddings).toHaveLength(2)
    const embeddings = fromAISDKEmbeddings(model)
    const session = await Agent.create().session(
      memoryWorkspace({ 'a.ts': 'function teardown() {}\n', 'b.ts': 'const rows = sql.table()\n' }),
      { retrieval: { embeddings, readinessTimeoutMs: 10_000 } },
    )
    const r = await session.tool('search', { mode: 'semantic', query: 'shutdown', limit: 1 })
    expect(r.exitCode).toBe(0)
    expect((r.metadata!.results as { path: string }[])[0]!.path).toBe('a.ts')
    expect(session.retrievalStatus()!.model).toEqual({
      provider: 'ai-sdk:fake',
      model: 'fake-embed',
      dimension: 32,
    })
    await session.close()
  })

  it('types the SDK errors: 429 with Retry-After, 400 rejected', async () => {
    const embeddings = fromAISDKEmbeddings(v3())
    const signal = new AbortController().signal
    fake.behaviour = { rateLimited: 1 }
    await expect(embeddings.embed([{ id: 'a', text: 'x' }], { signal })).rejects.toMatchObject({
      data: { kind: 'rate_limited', retry_after_ms: 0 },
    })
    fake.behaviour = { rejectText: 'x' }
    await expect(embeddings.embed([{ id: 'a', text: 'x' }], { signal })).rejects.toMatchObject({
      data: { kind: 'rejected' },
    })
    fake.behaviour = {}
  })
})
