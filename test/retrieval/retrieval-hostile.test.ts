// More hostile cases for retrieval: a provider answering 500 (then recovering, or never), huge
// hybrid queries, non-finite values from a custom port, and index builds running concurrently.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  Agent,
  memoryWorkspace,
  openAICompatibleEmbeddings,
  WorkspacePath,
  type EmbeddingModel,
  type Session,
} from '../../adapters/index.ts'
import {
  FAKE_DIMENSION,
  embedText,
  startFakeEmbeddings,
  type FakeEmbeddings,
} from './fake-embeddings.ts'

let fake: FakeEmbeddings
beforeAll(async () => {
  fake = await startFakeEmbeddings()
})
afterAll(async () => {
  await fake.close()
})
afterEach(() => {
  fake.behaviour = {}
  fake.statuses.length = 0
})

const FILES = {
  'src/server.ts': 'export function stopServer() {\n  // teardown every socket\n}\n',
  'src/db.ts': 'export function openDatabase() { return sql.table("rows") }\n',
  'README.md': 'A demo about colour and database rows.\n',
}

const embedder = () =>
  openAICompatibleEmbeddings({ baseURL: fake.url, model: 'fake', dimensions: FAKE_DIMENSION })

async function settled(session: Session): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (session.retrievalStatus()?.phase !== 'building') return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error('the index never settled')
}

const open = (
  files: Record<string, string>,
  embeddings: EmbeddingModel = embedder(),
  workspace = memoryWorkspace(files),
) =>
  Agent.create().session(workspace, {
    retrieval: {
      embeddings,
      readinessTimeoutMs: 10_000,
      symbols: false,
      limits: { retryDelayMs: 0 },
    },
  })

describe('a provider answering 500', () => {
  it('twice, then well: retried, the index is whole', async () => {
    fake.behaviour.serverError = 2
    const session = await open(FILES)
    await settled(session)
    expect(fake.statuses.slice(0, 3)).toEqual([500, 500, 200])
    expect(session.retrievalStatus()).toMatchObject({ phase: 'ready', indexedFiles: 3 })
    await session.close()
  })

  it('always: every file fails (degraded), the query is a typed transport error, hybrid answers', async () => {
    fake.behaviour.serverError = true
    const session = await open(FILES)
    await settled(session)
    expect(session.retrievalStatus()).toMatchObject({
      phase: 'degraded',
      failedFiles: 3,
      indexedFiles: 0,
    })
    const r = await session.tool('search', { mode: 'semantic', query: 'shutdown' })
    expect(r.exitCode).toBe(1)
    expect(r.errorKind).toMatchObject({ type: 'transport' })
    expect(r.output).toContain('upstream exploded')
    const h = await session.tool('search', { mode: 'hybrid', query: 'stopServer' })
    expect(h.exitCode).toBe(0)
    expect(h.metadata).toMatchObject({ channels: { semantic: 'unavailable' } })
    await session.close()
  })
})

describe('hostile queries and vectors', () => {
  it('refuses a 70 KiB hybrid query and one of whitespace, typed, without calling the embedder', async () => {
    const session = await open(FILES)
    await settled(session)
    const before = fake.statuses.length
    for (const query of ['stopServer '.repeat(7000), ' \n\t ']) {
      const r = await session.tool('search', { mode: 'hybrid', query })
      expect(r.exitCode).toBe(1)
      expect(r.errorKind?.type).toBe('invalid_argument')
    }
    expect(fake.statuses.length).toBe(before)
    await session.close()
  })

  it('a port answering Infinity or empty vectors fails its files, typed', async () => {
    const make = (values: (text: string) => number[]): EmbeddingModel => ({
      provider: 'custom',
      model: 'm',
      dimension: FAKE_DIMENSION,
      normalization: 'none',
      embed: async (inputs) => ({
        vectors: inputs.map(({ id, text }) => ({ id, values: values(text) })),
      }),
    })
    const infinite = make((t) => embedText(t).map((x, i) => (i === 3 ? Infinity : x)))
    const empty = make(() => [])
    for (const model of [infinite, empty]) {
      const session = await open(FILES, model)
      await settled(session)
      expect(session.retrievalStatus()).toMatchObject({ phase: 'degraded', failedFiles: 3 })
      const r = await session.tool('search', { mode: 'semantic', query: 'shutdown' })
      expect(r.exitCode).toBe(1)
      await session.close()
    }
  })
})

describe('concurrent index builds', () => {
  it('two sessions on one workspace build at once, and answer alike', async () => {
    const files: Record<string, string> = { ...FILES }
    for (let i = 0; i < 60; i++)
      files[`gen/f${i}.ts`] = `export const v${i} = "network cache ${i}"\n`
    const workspace = memoryWorkspace(files)
    const embeddings = embedder() // one embedder shared by both
    const [a, b] = await Promise.all([
      open({}, embeddings, workspace),
      open({}, embeddings, workspace),
    ])
    await Promise.all([settled(a), settled(b)])
    expect(a.retrievalStatus()).toMatchObject({ phase: 'ready', indexedFiles: 63 })
    expect(b.retrievalStatus()).toEqual(a.retrievalStatus())
    const [ra, rb] = await Promise.all(
      [a, b].map((s) => s.tool('search', { mode: 'semantic', query: 'teardown', limit: 5 })),
    )
    expect(ra!.metadata).toEqual(rb!.metadata)
    await Promise.all([a.close(), b.close()])
  })

  it('files rewritten during the build end up indexed as last written', async () => {
    const workspace = memoryWorkspace(FILES)
    fake.behaviour.delayMs = 30
    const session = await open({}, embedder(), workspace)
    const path = WorkspacePath.parse('src/db.ts')
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 15))
      await workspace.write(path, new TextEncoder().encode(`export const teardown${i} = 1\n`))
    }
    await settled(session)
    fake.behaviour = {}
    const r = await session.tool('search', { mode: 'semantic', query: 'teardown' })
    expect(r.exitCode).toBe(0)
    const hits = (r.metadata as { results: { path: string }[] }).results
    expect(hits.map((h) => h.path)).toContain('src/db.ts')
    expect(r.output).toContain('teardown2') // the last write, verified against the file
    expect(r.output).not.toMatch(/teardown[01]/)
    await session.close()
  })
})
