// Semantic and hybrid search in headless Chromium: a browser (IndexedDB) workspace, the embedder a
// loopback fake speaking the OpenAI wire protocol on another port (so the page's calls are
// cross-origin and go through CORS), tree-sitter loaded from URLs. The answers must equal those
// of the same files on a memory workspace in Node.
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import type { Plugin } from 'esbuild'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  Agent,
  TREE_SITTER_GRAMMARS,
  memoryWorkspace,
  openAICompatibleEmbeddings,
} from '../../adapters/index.ts'
import { nodeTreeSitterSymbols, treeSitterGrammarPath } from '../../adapters/node/index.ts'
import { launchChromium } from '../runtime/chromium-launch.ts'
import { bundle, nodeSpecifiers } from '../runtime/bundle.ts'
import { RETRIEVAL_FILES, RETRIEVAL_QUERIES } from './browser-retrieval-cases.ts'
import type { PageRun } from './browser-retrieval-page.ts'
import { startFakeEmbeddings, type FakeEmbeddings } from './fake-embeddings.ts'

const require = createRequire(import.meta.url)

/** web-tree-sitter's Emscripten glue names `fs`, `fs/promises`, `module` on its Node path only. */
const emptyNodePaths: Plugin = {
  name: 'empty-node-paths',
  setup(b) {
    b.onResolve({ filter: /^(fs|fs\/promises|module)$/ }, (args) => ({
      path: args.path,
      namespace: 'empty',
    }))
    b.onLoad({ filter: /.*/, namespace: 'empty' }, () => ({ contents: 'export default {}' }))
  },
}

const WASM: Record<string, string> = {
  'web-tree-sitter.wasm': require.resolve('web-tree-sitter/web-tree-sitter.wasm'),
  ...Object.fromEntries(
    TREE_SITTER_GRAMMARS.map((g) => [`tree-sitter-${g}.wasm`, treeSitterGrammarPath(g)]),
  ),
}

type Result = PageRun['results'][string]

/** The same queries over a memory workspace in Node. */
async function inNode(fake: FakeEmbeddings): Promise<PageRun> {
  const embeddings = openAICompatibleEmbeddings({
    baseURL: fake.url,
    model: 'fake-embed',
    dimensions: 32,
  })
  const session = await Agent.create().session(memoryWorkspace(RETRIEVAL_FILES), {
    retrieval: { embeddings, readinessTimeoutMs: 20_000, symbols: nodeTreeSitterSymbols },
  })
  const results: PageRun['results'] = {}
  for (const [label, args] of Object.entries(RETRIEVAL_QUERIES))
    results[label] = JSON.parse(JSON.stringify(await session.tool('search', args))) as Result
  const status = session.retrievalStatus()
  await session.close()
  return { results, status, closed: session.retrievalStatus() ?? null }
}

/** What must agree across runtimes: paths, chunk ids, scores, channels, output text. */
const comparable = (r: Result) => ({ exitCode: r.exitCode, output: r.output, metadata: r.metadata })

describe('semantic and hybrid search in Chromium (IndexedDB workspace)', () => {
  let fake: FakeEmbeddings
  let server: Server
  let browser: Browser
  let code: string
  let page: PageRun
  let node: PageRun
  let origin: string

  beforeAll(async () => {
    fake = await startFakeEmbeddings()
    code = await bundle(
      { entry: 'test/retrieval/browser-retrieval-page.ts', target: 'browser' },
      { plugins: [emptyNodePaths] },
    )
    server = createServer((req, res) => {
      const name = req.url?.replace(/^\/wasm\//, '')
      if (req.url === '/')
        return res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            '<!doctype html><html><head><link rel="icon" href="data:,"></head><body><script type="module" src="/page.js"></script></body></html>',
          )
      if (req.url === '/page.js')
        return res.writeHead(200, { 'content-type': 'text/javascript' }).end(code)
      if (name !== undefined && WASM[name] !== undefined)
        return res
          .writeHead(200, { 'content-type': 'application/wasm' })
          .end(readFileSync(WASM[name]))
      res.writeHead(404).end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    browser = await launchChromium()
    const tab = await browser.newPage()
    await tab.goto(`${origin}/`)
    await tab.waitForFunction(() => 'runRetrieval' in globalThis)
    page = await tab.evaluate(
      (config) =>
        (
          globalThis as unknown as {
            runRetrieval(c: typeof config): Promise<PageRun>
          }
        ).runRetrieval(config),
      { embeddingsUrl: fake.url, wasmBase: `${origin}/wasm`, name: `retrieval-${Date.now()}` },
    )
    const pageInputs = [...fake.inputs]
    fake.inputs.length = 0
    node = await inNode(fake)
    expect(pageInputs.join('\n')).not.toContain('do-not-embed-me')
  }, 240_000)

  afterAll(async () => {
    await browser?.close()
    await new Promise((resolve) => server?.close(resolve))
    await fake?.close()
  })

  it('bundles with no Node built-in; the embedder was called from the page, cross-origin', () => {
    expect(nodeSpecifiers(code)).toEqual([])
    expect(fake.origins).toContain(origin)
  })

  it('finds by meaning, fuses with tree-sitter symbols, verifies every hit', () => {
    const semantic = page.results.semantic!
    expect(semantic.exitCode).toBe(0)
    const first = (m: unknown) => (m as { results: Record<string, unknown>[] }).results[0]
    expect(semantic.metadata).toMatchObject({ mode: 'semantic', algorithm: 'exact_cosine' })
    expect(first(semantic.metadata)).toMatchObject({ path: 'src/server.ts', digest_verified: true })
    const hybrid = page.results.hybrid!
    expect(hybrid.metadata).toMatchObject({ channels: { symbol: 'tree_sitter', semantic: 'ok' } })
    const results = (
      hybrid.metadata as { results: { path: string; channels: Record<string, number> }[] }
    ).results
    expect(results.filter((h) => h.channels.symbol !== undefined).map((h) => h.path)).toEqual([
      'app/Shop.java',
    ])
    expect(first(page.results['hybrid identifier']!.metadata)).toMatchObject({
      path: 'src/server.ts',
      exact_identifier: true,
    })
    expect(page.results['bad limit']!.exitCode).toBe(1)
    expect(page.status).toMatchObject({ phase: 'ready', eligibleFiles: 5, indexedFiles: 5 })
    expect(page.closed).toMatchObject({ phase: 'closed', vectorRecords: 0 })
  })

  it('answers exactly what Node answers over the same files', () => {
    for (const label of Object.keys(RETRIEVAL_QUERIES))
      expect(comparable(page.results[label]!), label).toEqual(comparable(node.results[label]!))
    expect(page.status).toEqual(node.status)
  })
})
