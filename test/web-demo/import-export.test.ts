// Importing a folder into the in-tab workspace (the picker with webkitdirectory, and drag and
// drop), searching it, and exporting the workspace as a zip, in Chromium against the built demo.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { unzipSync } from 'fflate'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { useDemo } from './demo-harness.ts'

const FILES = 200
const SAMPLE = join(import.meta.dirname, '../../examples/sample-project')
let page: Page
const tmp = mkdtempSync(join(tmpdir(), 'isoagent-demo-import-'))
const project = join(tmp, 'proj')
const expected = new Map<string, string>()
for (let i = 0; i < FILES; i++) {
  const sub = `pkg-${i % 10}`
  mkdirSync(join(project, 'src', sub), { recursive: true })
  const text = `export const value_${i} = ${i}\n${i % 4 === 0 ? `// NEEDLE ${i}\n` : ''}`
  writeFileSync(join(project, 'src', sub, `mod-${i}.ts`), text)
  expected.set(`proj/src/${sub}/mod-${i}.ts`, text)
}
mkdirSync(join(tmp, 'served'))

const demo = useDemo({
  args: ['--workspace', join(tmp, 'served')],
  mode: 'tab',
  cleanup: () => rmSync(tmp, { recursive: true, force: true }),
})
beforeAll(() => void ({ page } = demo))

describe('web demo, import and export (Chromium)', () => {
  it(`imports a folder of ${FILES} files and searches it`, async () => {
    await page.setInputFiles('#import-folder', project)
    await page.waitForSelector(`#status:has-text("Imported ${FILES} files")`, { timeout: 60_000 })
    await page.waitForSelector('.tree-dir[data-path="proj"]')

    await page.click('#tab-search')
    await page.selectOption('#search-mode', 'grep')
    await page.fill('#search-query', 'NEEDLE')
    await page.click('#search-run')
    await page.waitForSelector('#search-summary:has-text("50 results")', { timeout: 30_000 })
    const paths = await page.$$eval('#search-results .hit', (hits) =>
      hits.map((h) => (h as HTMLElement).dataset.path),
    )
    expect(new Set(paths).size).toBe(50)
    expect(paths).toContain('proj/src/pkg-0/mod-0.ts')

    await page.selectOption('#search-mode', 'glob')
    await page.fill('#search-query', 'proj/**/*.ts')
    await page.click('#search-run')
    await page.waitForSelector(`#search-summary:has-text("${FILES} results")`)
  })

  it('imports files dropped on the page', async () => {
    const transfer = await page.evaluateHandle(() => {
      const data = new DataTransfer()
      data.items.add(new File(['dropped text\n'], 'dropped.txt', { type: 'text/plain' }))
      return data
    })
    await page.dispatchEvent('body', 'drop', { dataTransfer: transfer })
    await page.waitForSelector('#status:has-text("Imported 1 files")')
    await page.waitForSelector('.tree-file[data-path="dropped.txt"]')
  })

  it('exports the workspace as a zip holding every file, byte for byte', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-zip')])
    expect(download.suggestedFilename()).toBe('isoagent-workspace.zip')
    const entries = unzipSync(new Uint8Array(readFileSync(await download.path())))
    const names = Object.keys(entries).sort()
    // The sample project the first visit wrote is there too (its .git left out).
    const sample = readdirSync(SAMPLE, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => relative(SAMPLE, join(e.parentPath, e.name)))
    expect(sample).toContain('src/slugify.ts')
    expect(names).toEqual([...expected.keys(), 'dropped.txt', ...sample].sort())
    const decoder = new TextDecoder()
    for (const [path, text] of expected) expect(decoder.decode(entries[path])).toBe(text)
    expect(decoder.decode(entries['dropped.txt'])).toBe('dropped text\n')
  })

  it('logged no console error and no page error', () => {
    expect(demo.errors).toEqual([])
  })
})
