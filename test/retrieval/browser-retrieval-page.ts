// The page side of browser-retrieval.test.ts, bundled for Chromium (Node built-ins forbidden):
// a session over the IndexedDB workspace with an OpenAI-compatible embedder on another loopback
// port (cross-origin: CORS) and tree-sitter loaded from URLs the test server serves.
import * as library from 'web-tree-sitter'
import {
  Agent,
  browserWorkspace,
  openAICompatibleEmbeddings,
  treeSitterSymbols,
  WorkspacePath,
  type ToolResult,
} from '../../adapters/browser/index.ts'
import { RETRIEVAL_FILES, RETRIEVAL_QUERIES } from './browser-retrieval-cases.ts'

/** What the page hands back: each query's result and the status before and after close. */
export interface PageRun {
  results: Record<string, { exitCode: number; output: string; metadata: unknown }>
  status: unknown
  closed: unknown
}

const plain = (r: ToolResult) => JSON.parse(JSON.stringify(r)) as PageRun['results'][string]

async function run(config: { embeddingsUrl: string; wasmBase: string; name: string }) {
  const workspace = browserWorkspace({ name: config.name })
  const encoder = new TextEncoder()
  for (const [path, text] of Object.entries(RETRIEVAL_FILES))
    await workspace.write(WorkspacePath.parse(path), encoder.encode(text))
  const symbols = treeSitterSymbols(library, {
    runtime: `${config.wasmBase}/web-tree-sitter.wasm`,
    grammar: (name) => `${config.wasmBase}/tree-sitter-${name}.wasm`,
  })
  const embeddings = openAICompatibleEmbeddings({
    baseURL: config.embeddingsUrl,
    model: 'fake-embed',
    dimensions: 32,
  })
  const session = await Agent.create().session(workspace, {
    retrieval: { embeddings, readinessTimeoutMs: 20_000, symbols },
  })
  const results: PageRun['results'] = {}
  for (const [label, args] of Object.entries(RETRIEVAL_QUERIES))
    results[label] = plain(await session.tool('search', args))
  const status = session.retrievalStatus()
  await session.close()
  return { results, status, closed: session.retrievalStatus() ?? null }
}

;(globalThis as unknown as { runRetrieval: typeof run }).runRetrieval = run
