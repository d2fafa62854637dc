// The semantic search panel in server mode with an embedder (Chromium, the built demo and the
// built `isoagent serve --embeddings-url` pointed at the loopback fake of the retrieval tests):
// the index's progress shows, and a semantic query finds the chunk grep misses.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeEmbeddings, type FakeEmbeddings } from '../retrieval/fake-embeddings.ts'
import { useDemo } from './demo-harness.ts'
import { retrievalSearch, showPanel } from './showcase-helpers.ts'

let fake: FakeEmbeddings
let page: Page
const dir = mkdtempSync(join(tmpdir(), 'isoagent-demo-showcase-retrieval-'))
writeFileSync(join(dir, 'lifecycle.ts'), 'export function shutdown() {\n  return 0\n}\n')
writeFileSync(join(dir, 'colours.ts'), 'export const paint = "blue"\n')

beforeAll(async () => {
  fake = await startFakeEmbeddings()
})
afterAll(() => fake?.close())

const demo = useDemo({
  args: () => [
    '--workspace',
    dir,
    '--embeddings-url',
    fake.url,
    '--embeddings-model',
    'fake-embedder',
  ],
  mode: 'server',
  cleanup: () => rmSync(dir, { recursive: true, force: true }),
})
beforeAll(() => void ({ page } = demo))

const search = (mode: string, query: string) => retrievalSearch(page, mode, query)

describe('semantic search panel with an embedder (Chromium)', () => {
  it('shows the index progress and offers semantic and hybrid', async () => {
    await showPanel(page, 'retrieval')
    await page.waitForSelector('#retrieval-progress:has-text("fake-embedder")')
    expect(await page.textContent('#retrieval-status')).not.toContain('No embeddings provider')
    expect(await page.inputValue('#retrieval-mode')).toBe('hybrid')
  })

  it('a semantic query finds the chunk that grep misses', async () => {
    expect(await search('grep', 'teardown')).not.toContain('lifecycle.ts')
    const semantic = await search('semantic', 'teardown')
    expect(semantic).toContain('lifecycle.ts')
    expect(await page.$('#retrieval-result .result.ok')).not.toBeNull()
    await page.waitForSelector('#retrieval-progress:has-text("2 of 2 files")')
  })

  it('logged no console or page error', () => {
    expect(demo.errors).toEqual([])
  })
})
