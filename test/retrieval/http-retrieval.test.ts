// GET /v1/sessions/:id/retrieval over the app's fetch handler, with the loopback embedder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryWorkspace, openAICompatibleEmbeddings } from '../../adapters/index.ts'
import { createApp } from '../../edge/http/app.ts'
import { FAKE_DIMENSION, startFakeEmbeddings, type FakeEmbeddings } from './fake-embeddings.ts'

let fake: FakeEmbeddings
beforeAll(async () => {
  fake = await startFakeEmbeddings()
})
afterAll(async () => {
  await fake.close()
})

async function openSession(app: ReturnType<typeof createApp>): Promise<string> {
  const res = await app.fetch(
    new Request('http://127.0.0.1/v1/sessions', { method: 'POST', body: '{}' }),
  )
  expect(res.status).toBe(201)
  return ((await res.json()) as { id: string }).id
}

describe('GET /v1/sessions/:id/retrieval', () => {
  it('answers the status of a session with retrieval, 404 retrieval_not_configured without', async () => {
    const embeddings = openAICompatibleEmbeddings({
      baseURL: fake.url,
      model: 'm',
      dimensions: FAKE_DIMENSION,
    })
    const app = createApp({
      workspace: () => memoryWorkspace({ 'a.ts': 'shutdown\n', 'b.ts': 'close\n' }),
      session: { retrieval: { embeddings } },
    })
    const id = await openSession(app)
    let status: Record<string, unknown> = {}
    for (let i = 0; i < 200; i++) {
      const res = await app.fetch(new Request(`http://127.0.0.1/v1/sessions/${id}/retrieval`))
      expect(res.status).toBe(200)
      status = (await res.json()) as Record<string, unknown>
      if (status.phase !== 'building') break
      await new Promise((r) => setTimeout(r, 10))
    }
    expect(status).toMatchObject({
      phase: 'ready',
      indexedFiles: 2,
      vectorRecords: 2,
      coverageBps: 10000,
    })
    const tool = await app.fetch(
      new Request(`http://127.0.0.1/v1/sessions/${id}/tools/search`, {
        method: 'POST',
        body: JSON.stringify({ args: { mode: 'semantic', query: 'teardown', limit: 2 } }),
      }),
    )
    expect(tool.status).toBe(200)
    const result = (await tool.json()) as { exitCode: number; metadata: { results: unknown[] } }
    expect(result.exitCode).toBe(0)
    expect(result.metadata.results).toHaveLength(2)
    await app.close()

    const plain = createApp({ workspace: () => memoryWorkspace({}) })
    const other = await openSession(plain)
    const res = await plain.fetch(new Request(`http://127.0.0.1/v1/sessions/${other}/retrieval`))
    expect(res.status).toBe(404)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
      'retrieval_not_configured',
    )
    const missing = await plain.fetch(new Request('http://127.0.0.1/v1/sessions/nope/retrieval'))
    expect(missing.status).toBe(404)
    await plain.close()
  })
})
