// hybrid's symbol channel: tree-sitter on Node (grammars from @vscode/tree-sitter-wasm) and the
// regex fallback where no parser is available; both over a session with the loopback embedder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  Agent,
  grammarOf,
  memoryWorkspace,
  openAICompatibleEmbeddings,
  treeSitterSymbols,
  type RetrievalOptions,
  type Session,
} from '../../adapters/index.ts'
import { nodeTreeSitterSymbols } from '../../adapters/node/index.ts'
import { FAKE_DIMENSION, startFakeEmbeddings, type FakeEmbeddings } from './fake-embeddings.ts'
import { SYMBOL_EXPECTED, SYMBOL_SOURCES } from './symbol-fixtures.ts'

let fake: FakeEmbeddings
beforeAll(async () => {
  fake = await startFakeEmbeddings()
})
afterAll(async () => {
  await fake.close()
})

async function open(
  files: Record<string, string>,
  symbols: RetrievalOptions['symbols'],
): Promise<Session> {
  const embeddings = openAICompatibleEmbeddings({
    baseURL: fake.url,
    model: 'fake-embed',
    dimensions: FAKE_DIMENSION,
  })
  return Agent.create().session(memoryWorkspace(files), {
    retrieval: { embeddings, readinessTimeoutMs: 10_000, symbols },
  })
}

type Hit = { path: string; channels: Record<string, number> }
async function hybrid(session: Session, query: string) {
  const r = await session.tool('search', { mode: 'hybrid', query })
  expect(r.exitCode).toBe(0)
  const meta = r.metadata as { channels: Record<string, string>; results: Hit[] }
  const symbolPaths = meta.results
    .filter((h) => h.channels.symbol !== undefined)
    .sort((a, b) => a.channels.symbol! - b.channels.symbol!)
    .map((h) => h.path)
  return { engine: meta.channels.symbol, symbolPaths, results: meta.results }
}

// A Java method has no keyword the regex knows; a comment naming "function restock" fools it.
const MIXED = {
  'app/Shop.java': 'class Shop {\n  public void restock() {}\n}\n',
  'src/notes.ts': '// the function restock moved to Shop.java\nexport const note = 1\n',
  'scripts/tool.rb': 'def restock_all\nend\n',
}

describe('tree-sitter definitions (Node)', () => {
  it('finds functions, classes, methods, types and interfaces in 7 grammars', async () => {
    await nodeTreeSitterSymbols.ready()
    for (const [path, text] of Object.entries(SYMBOL_SOURCES)) {
      const found = await nodeTreeSitterSymbols.extract(path, text)
      expect(
        found?.map((d) => `${d.kind} ${d.name}@${d.line}`),
        path,
      ).toEqual(SYMBOL_EXPECTED[path])
    }
    expect(await nodeTreeSitterSymbols.extract('README.md', 'function x() {}')).toBeUndefined()
    expect(grammarOf('a/b.test.mts')).toBe('typescript')
    expect(grammarOf('a.d/README')).toBeUndefined()
  })
})

describe('symbol channel', () => {
  it('with tree-sitter: the Java method, not the comment; the regex still reads Ruby', async () => {
    const session = await open(MIXED, nodeTreeSitterSymbols)
    const { engine, symbolPaths } = await hybrid(session, 'restock')
    expect(engine).toBe('tree_sitter')
    expect(symbolPaths).toEqual(['app/Shop.java'])
    const ruby = await hybrid(session, 'restock_all')
    expect(ruby.symbolPaths).toEqual(['scripts/tool.rb'])
    await session.close()
  })

  it('with symbols: false, the regex: misses the method, is fooled by the comment', async () => {
    const session = await open(MIXED, false)
    const { engine, symbolPaths } = await hybrid(session, 'restock')
    expect(engine).toBe('regex')
    expect(symbolPaths).toEqual(['src/notes.ts'])
    await session.close()
  })

  it('a parser that cannot load falls back to the regex; hybrid still answers', async () => {
    const broken = treeSitterSymbols(
      () => Promise.reject(new Error('no WebAssembly from bytes here')),
      { grammar: () => undefined },
    )
    const session = await open(MIXED, broken)
    const { engine, symbolPaths, results } = await hybrid(session, 'restock')
    expect(engine).toBe('regex')
    expect(symbolPaths).toEqual(['src/notes.ts'])
    expect(results.map((h) => h.path)).toContain('app/Shop.java') // exact/lexical still find it
    await session.close()
  })

  it('a grammar that fails to load leaves only its files to the regex', async () => {
    const library = async () => (await import('web-tree-sitter')) as never
    const noJava = treeSitterSymbols(library, {
      grammar: (name) => (name === 'java' ? new Uint8Array([0, 97, 115, 109, 9, 9]) : undefined),
    })
    const session = await open(MIXED, noJava)
    const { engine, symbolPaths } = await hybrid(session, 'restock')
    expect(engine).toBe('tree_sitter')
    expect(symbolPaths).toEqual(['src/notes.ts']) // .java and .ts both read by the regex here
    await session.close()
  })

  it('leaves files over 256 KiB to the regex (a parse blocks the thread)', async () => {
    const java = 'class Shop {\n  public void restockAll() {}\n}\n'
    const session = await open(
      { 'big/Big.java': java + '// padding line\n'.repeat(18_000), 'small/Small.java': java },
      nodeTreeSitterSymbols,
    )
    const { engine, symbolPaths } = await hybrid(session, 'restockAll')
    expect(engine).toBe('tree_sitter')
    expect(symbolPaths).toEqual(['small/Small.java'])
    await session.close()
  })

  it('refuses a symbols option that is no extractor', async () => {
    await expect(open({}, { engine: 'x' } as never)).rejects.toThrow(/retrieval.symbols/)
  })
})
