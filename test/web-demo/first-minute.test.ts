// A new user's first minute with the built demo, in Chromium, in both modes, served by
// `bin/start.mjs` (what `npm start` runs after its build) on loopback: the sample project is
// there on the first visit, search opens a line highlighted in the CodeMirror editor, an edit is
// reviewed in a merge view and applied, "Reset sample" puts the sample back (this tab), the
// keyboard reaches and works every control, a 420 px window stays usable, no console error.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { editorText, fillEditor, openInEditor, useDemo } from './demo-harness.ts'

const SAMPLE = join(import.meta.dirname, '../../examples/sample-project')
const SLUGIFY = readFileSync(join(SAMPLE, 'src/slugify.ts'), 'utf8')
/** The line search must find, and its 1-based number in the sample. */
const KNOWN = 'const maxLength = options.maxLength ?? 64'
const KNOWN_LINE = SLUGIFY.split('\n').findIndex((l) => l.includes(KNOWN)) + 1

async function runGit(page: Page, id: string): Promise<string> {
  await page.click('#tab-git')
  await page.evaluate(() => document.getElementById('git-output')!.replaceChildren())
  await page.click(id)
  await page.waitForSelector('#git-output .result')
  return (await page.textContent('#git-output')) ?? ''
}

async function search(page: Page, query: string): Promise<void> {
  await page.click('#tab-search')
  await page.selectOption('#search-mode', 'grep')
  await page.fill('#search-query', query)
  await page.click('#search-run')
  await page.waitForSelector('#search-summary:has-text("result")')
}

describe.each(['tab', 'server'] as const)('the first minute, %s mode (Chromium)', (mode) => {
  let page: Page
  /** The server's copy of the sample (start.mjs's temporary directory). */
  let served: string

  const demo = useDemo({ entry: 'start', mode })
  beforeAll(() => {
    page = demo.page
    served = /Demo workspace: a copy of examples\/sample-project in (\S+)/.exec(
      demo.server.banner,
    )![1]!
  })

  it('has the sample project on the first visit, README.md open and highlighted', async () => {
    await page.waitForSelector('.tree-file[data-path="README.md"]')
    const names = await page.$$eval('.tree > li > button', (b) => b.map((x) => x.textContent))
    expect(names).toEqual(expect.arrayContaining(['README.md', 'src/', 'test/']))
    await page.waitForSelector('#editor[data-path="README.md"][data-language="markdown"]')
    expect(await editorText(page)).toBe(
      readFileSync(join(SAMPLE, 'README.md'), 'utf8').replace(/\n$/, ''),
    )
    expect(await page.$$eval('#editor .cm-gutterElement', (g) => g.length)).toBeGreaterThan(5)
    if (mode === 'tab') expect(await page.textContent('#status')).toContain('first visit')
    expect(await runGit(page, '#git-log')).toContain('sample project')
    expect(await runGit(page, '#git-status')).toMatch(/## main/)
  })

  it('finds a known line with search and opens it highlighted in the editor', async () => {
    await search(page, 'maxLength = options')
    const hit = page.locator(`#search-results .hit[data-path="src/slugify.ts"]`)
    expect(await hit.getAttribute('data-line')).toBe(String(KNOWN_LINE))
    await hit.click()
    await page.waitForSelector(`#editor[data-line="${KNOWN_LINE}"][data-language="typescript"]`)
    expect(await page.getAttribute('#tab-file', 'aria-selected')).toBe('true')
    const marked = page.locator('#editor .cm-hit-line')
    expect(await marked.count()).toBe(1)
    expect((await marked.textContent())?.trim()).toBe(KNOWN)
    // Inside the editor's visible area, and selected.
    const line = (await marked.boundingBox())!
    const box = (await page.locator('#editor .cm-scroller').boundingBox())!
    expect(line.y).toBeGreaterThanOrEqual(box.y)
    expect(line.y + line.height).toBeLessThanOrEqual(box.y + box.height)
    expect(await page.evaluate(() => getSelection()?.toString().trim())).toBe(KNOWN)
    // Syntax colours: the keyword `const` is a highlighted token, not plain text.
    expect(await page.locator('#editor .cm-hit-line span').count()).toBeGreaterThan(0)
  })

  it('reviews an edit in a merge view (dry run), then applies it through edit', async () => {
    await openInEditor(page, 'src/slugify.ts')
    const changed = SLUGIFY.replace("options.separator ?? '-'", "options.separator ?? '_'")
    await fillEditor(page, changed.replace(/\n$/, ''))
    await page.click('#review')
    await page.waitForSelector('#merge-view .cm-mergeView')
    const sides = page.locator('#merge-view .cm-mergeView .cm-editor')
    expect(await sides.count()).toBe(2)
    expect(await sides.nth(0).locator('.cm-changedLine').textContent()).toContain("?? '-'")
    expect(await sides.nth(1).locator('.cm-changedLine').textContent()).toContain("?? '_'")
    expect(await page.textContent('#diff-before h3')).toContain('the dry run passed')
    // Reviewing ran edit with dry_run: nothing written yet.
    if (mode === 'server')
      expect(readFileSync(join(served, 'src/slugify.ts'), 'utf8')).toBe(SLUGIFY)
    expect(await runGit(page, '#git-status')).not.toContain('slugify')
    await page.click('#tab-file')

    await page.click('#apply')
    await page.waitForSelector('#file-status:has-text("Saved src/slugify.ts")')
    expect(await page.textContent('#diff-after .diff')).toContain('+  const separator')
    if (mode === 'server')
      expect(readFileSync(join(served, 'src/slugify.ts'), 'utf8')).toBe(changed)
    expect(await runGit(page, '#git-diff')).toContain("?? '_'")
  })

  it(
    mode === 'tab'
      ? 'puts the sample back with Reset sample (files, .git)'
      : 'offers no Reset sample (the workspace is the server’s)',
    async () => {
      if (mode === 'server') {
        expect(await page.$('#reset-sample')).toBeNull()
        return
      }
      await page.click('#tab-file')
      await page.fill('#open-path', 'notes/extra.txt')
      await page.click('#new-file')
      await page.waitForSelector('#editor[data-path="notes/extra.txt"]')
      await fillEditor(page, 'not in the sample')
      await page.click('#review')
      await page.click('#apply')
      await page.waitForSelector('.tree-dir[data-path="notes"]')

      await page.click('#reset-sample')
      await page.waitForSelector('#reset-dialog[open]')
      await page.click('#reset-confirm')
      await page.waitForSelector('#status:has-text("the sample project is back")')
      await page.waitForSelector('.tree-file[data-path="README.md"]')
      expect(await page.$('.tree-dir[data-path="notes"]')).toBeNull()
      await openInEditor(page, 'src/slugify.ts')
      expect(await editorText(page)).toBe(SLUGIFY.replace(/\n$/, ''))
      const status = await runGit(page, '#git-status')
      expect(status).toMatch(/## main/)
      expect(status).not.toContain('slugify')
      expect(await runGit(page, '#git-log')).toContain('sample project')
    },
  )

  it('works from the keyboard: Tab reaches the controls, Enter runs them, Escape closes', async () => {
    await demo.reload()
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur())
    const reached = new Set<string>()
    const order: string[] = []
    for (let i = 0; i < 40 && !reached.has('tab-file'); i++) {
      await page.keyboard.press('Tab')
      const id = await page.evaluate(() => document.activeElement?.id ?? '')
      reached.add(id)
      order.push(id)
    }
    expect(reached).toContain(`mode-${mode}`)
    if (mode === 'tab') {
      expect(order.indexOf('export-zip')).toBeLessThan(order.indexOf('reset-sample'))
      // One stop per import button (its label), not a second one on the hidden file input.
      expect(reached).not.toContain('import-files')
    }
    // The panel tabs are one stop (the selected one); the arrow keys move between them.
    expect(reached).toContain('tab-file')
    await page.keyboard.press('ArrowRight')
    expect(await page.getAttribute('#tab-search', 'aria-selected')).toBe('true')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('search-query')
    await page.keyboard.type('maxLength = options')
    await page.keyboard.press('Enter')
    const hit = page.locator('#search-results .hit[data-path="src/slugify.ts"]')
    await hit.waitFor()
    await hit.focus()
    await page.keyboard.press('Enter')
    await page.waitForSelector(`#editor[data-line="${KNOWN_LINE}"]`)

    // Escape closes a dialog: the reset one (this tab) changes nothing; the ask dialog (the
    // server's `bash(rm *)` rule) refuses the call.
    if (mode === 'tab') {
      await page.focus('#reset-sample')
      await page.keyboard.press('Enter')
      await page.waitForSelector('#reset-dialog[open]')
      await page.keyboard.press('Escape')
      await page.waitForSelector('#reset-dialog:not([open])', { state: 'attached' })
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('reset-sample')
    } else {
      await page.click('#tab-console')
      await page.selectOption('#console-tool', 'bash')
      await page.fill('#arg-bash-command', 'rm README.md')
      await page.focus('#console-run')
      await page.keyboard.press('Enter')
      await page.waitForSelector('#confirm-dialog[open]')
      await page.keyboard.press('Escape')
      const refused = await page.waitForSelector('#console-result .result.failed')
      expect(await refused.getAttribute('data-error-kind')).toBe('permission_denied')
      expect(readFileSync(join(served, 'README.md'), 'utf8')).toContain('sample-project')
    }
  })

  it('stays usable in a 420 px wide window', async () => {
    await page.setViewportSize({ width: 420, height: 800 })
    try {
      await page.click('#tab-file')
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      )
      expect(overflow).toBeLessThanOrEqual(0)
      const controls = ['#tab-file', '#tab-search', '#open-path', '#review', '#editor .cm-editor']
      if (mode === 'tab') controls.push('#reset-sample')
      for (const selector of controls) {
        const box = (await page.locator(selector).boundingBox())!
        expect(box, selector).not.toBeNull()
        expect(box.width, selector).toBeGreaterThan(0)
        expect(box.x + box.width, selector).toBeLessThanOrEqual(420)
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 })
    }
  })

  it('logged no console error and no page error', () => {
    expect(demo.errors).toEqual([])
  })
})
