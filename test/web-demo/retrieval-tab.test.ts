// Semantic search in "this tab" mode (Chromium, the built demo): the user gives the tab an
// OpenAI-compatible embeddings endpoint in the semantic search panel (the loopback fake of the
// retrieval tests, another origin, so over CORS); after the reload the tab's session indexes its
// IndexedDB workspace and a semantic query finds the chunk grep misses.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeEmbeddings, type FakeEmbeddings } from '../retrieval/fake-embeddings.ts'
import { useDemo } from './demo-harness.ts'
import { governedCall, governedResult, retrievalSearch, showPanel } from './showcase-helpers.ts'

const KEY = 'sk-embed-tab-0123456789'
let fake: FakeEmbeddings
let page: Page
const dir = mkdtempSync(join(tmpdir(), 'isoagent-demo-retrieval-tab-'))

beforeAll(async () => {
  fake = await startFakeEmbeddings()
})
afterAll(() => fake?.close())

const demo = useDemo({
  args: ['--workspace', dir],
  mode: 'tab',
  cleanup: () => rmSync(dir, { recursive: true, force: true }),
})
beforeAll(() => void ({ page } = demo))

const search = (mode: string, query: string) => retrievalSearch(page, mode, query)

describe('semantic search in this tab with a given embedder (Chromium)', () => {
  it('without an embedder: says so, offers the endpoint form, refuses a bad one', async () => {
    await governedCall(page, 'write', {
      file_path: 'lifecycle.ts',
      content: 'export function shutdown() {\n  return 0\n}\n',
    })
    expect(await governedResult(page)).toBe('')
    await showPanel(page, 'retrieval')
    expect(await page.textContent('#retrieval-status')).toContain('No embeddings provider')
    await page.fill('#embed-url', 'not a url')
    await page.click('#embed-use')
    await page.waitForSelector('#embed-error [data-note="missing"]')
    expect(fake.origins).toHaveLength(0)
  })

  it('uses the endpoint after the reload: index progress, semantic finds what grep misses', async () => {
    await page.fill('#embed-url', fake.url)
    await page.fill('#embed-model', 'fake-embedder')
    await page.fill('#embed-key', KEY)
    await Promise.all([page.waitForEvent('load'), page.click('#embed-use')])
    await page.waitForSelector('body[data-ready="tab"]', { timeout: 30_000 })
    await showPanel(page, 'retrieval')
    await page.waitForSelector('#retrieval-progress:has-text("fake-embedder")')
    expect(await page.textContent('#retrieval-status')).not.toContain('No embeddings provider')
    expect(await page.inputValue('#embed-url')).toBe(fake.url)

    expect(await search('grep', 'teardown')).not.toContain('lifecycle.ts')
    expect(await search('semantic', 'teardown')).toContain('lifecycle.ts')
    // The page itself called the endpoint (its origin, over CORS); the key stays in this tab.
    expect(fake.origins).toContain(demo.server.url)
    const storage = await page.evaluate(() => ({
      local: JSON.stringify({ ...localStorage }),
      session: JSON.stringify({ ...sessionStorage }),
    }))
    expect(storage.local).not.toContain(KEY)
    expect(storage.session).toContain(KEY)
  })

  it('Remove forgets the endpoint', async () => {
    await Promise.all([page.waitForEvent('load'), page.click('#embed-remove')])
    await page.waitForSelector('body[data-ready="tab"]', { timeout: 30_000 })
    await showPanel(page, 'retrieval')
    expect(await page.textContent('#retrieval-status')).toContain('No embeddings provider')
    expect(await page.inputValue('#embed-url')).toBe('')
  })

  it('logged no console or page error', () => {
    expect(demo.errors).toEqual([])
  })
})
