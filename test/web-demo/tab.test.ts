// The web demo's "this tab" mode in Chromium, against the built demo served by `isoagent serve`:
// every tool runs in the page over IndexedDB.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { editorText, fillEditor, openInEditor, useDemo } from './demo-harness.ts'

let page: Page
const dir = mkdtempSync(join(tmpdir(), 'isoagent-demo-tab-'))

const demo = useDemo({
  args: ['--workspace', dir],
  mode: 'tab',
  cleanup: () => rmSync(dir, { recursive: true, force: true }),
})
beforeAll(() => void ({ page } = demo))

const openFile = (path: string) => openInEditor(page, path)

describe('web demo, this tab (Chromium)', () => {
  it('offers the browser workspace tools: no bash, no download', async () => {
    const tools = await page.$$eval('#tool-list li', (items) => items.map((i) => i.textContent))
    expect(tools).toEqual(
      expect.arrayContaining(['read', 'write', 'edit', 'ls', 'search', 'git', 'program']),
    )
    expect(tools).not.toContain('bash')
    expect(tools).not.toContain('download')
    expect(await page.textContent('#status')).toContain('this tab')
  })

  it('creates a file, shows the diff of an edit before and after applying it', async () => {
    await page.fill('#open-path', 'notes/hello.txt')
    await page.click('#new-file')
    await page.waitForSelector('#editor[data-path="notes/hello.txt"]')
    await fillEditor(page, 'alpha\nbeta\ngamma\n')
    await page.click('#review')
    await page.click('#apply')
    await page.waitForSelector('#file-status:has-text("Saved notes/hello.txt")')
    await page.waitForSelector('.tree-dir[data-path="notes"]')

    await openFile('notes/hello.txt')
    expect(await editorText(page)).toBe('alpha\nbeta\ngamma')
    await fillEditor(page, 'alpha\nBETA-EDITED\ngamma')
    await page.click('#review')
    // The review: before and after side by side, and the dry run's diff beside them.
    await page.waitForSelector('#merge-view .cm-mergeView')
    const before = await page.waitForSelector('#diff-before .diff', { state: 'attached' })
    expect(await before.textContent()).toContain('-beta')
    expect(await before.textContent()).toContain('+BETA-EDITED')
    expect(await page.$('#diff-after .diff')).toBeNull()
    await page.click('#apply')
    const after = await page.waitForSelector('#diff-after .diff')
    expect(await after.textContent()).toContain('+BETA-EDITED')
    // The edit's end reached the timeline with its duration and projection evidence.
    const edit = page.locator('#timeline li[data-tool="edit"][data-state="completed"]').first()
    await edit.locator('.evidence').waitFor()
    expect(await edit.textContent()).toMatch(/completed in \d+ ms/)
    expect(await edit.locator('.evidence').textContent()).toMatch(/projection: \d+ B → \d+ B/)
  })

  it('keeps the file across a reload (IndexedDB), and grep finds it and opens it at the line', async () => {
    await demo.reload()
    await openFile('notes/hello.txt')
    expect(await editorText(page)).toBe('alpha\nBETA-EDITED\ngamma')

    await page.click('#tab-search')
    await page.selectOption('#search-mode', 'grep')
    await page.fill('#search-query', 'BETA-ED')
    await page.click('#search-run')
    const hit = await page.waitForSelector('#search-results .hit[data-path="notes/hello.txt"]')
    expect(await hit.getAttribute('data-line')).toBe('2')
    await hit.click()
    await page.waitForSelector('#editor[data-line="2"]')
    expect(await page.getAttribute('#tab-file', 'aria-selected')).toBe('true')
    expect(await page.evaluate(() => getSelection()?.toString())).toBe('BETA-EDITED')
    expect(await page.textContent('#editor .cm-hit-line')).toBe('BETA-EDITED')
  })

  it('runs git add, commit and log on the sample repository, and init again', async () => {
    await page.click('#tab-git')
    const run = async (id: string, expected: RegExp) => {
      await page.click(id)
      await page.waitForSelector('#git-output .result')
      const text = (await page.textContent('#git-output')) ?? ''
      expect(text).toMatch(expected)
      return text
    }
    await run('#git-add', /add 'notes\/hello\.txt'/)
    await page.fill('#git-message', 'first commit from the tab')
    await run('#git-commit', /first commit from the tab/)
    const log = await run('#git-log', /first commit from the tab/)
    expect(log).toContain('sample project')
    await run('#git-status', /## main/)
    await run('#git-init', /Git repository/)
  })

  it('runs a program with inputs and shows its value', async () => {
    await page.click('#tab-program')
    await page.fill('#program-inputs', '{ "n": 21 }')
    await page.click('#program-run')
    const value = await page.waitForSelector('#program-result', { timeout: 30_000 })
    const shown = JSON.parse((await value.textContent()) ?? 'null') as {
      doubled: number
      files: number
    }
    expect(shown.doubled).toBe(42)
    expect(shown.files).toBeGreaterThanOrEqual(1)
  })

  it('opens the merge view’s collapsed unchanged lines from the keyboard', async () => {
    const lines = Array.from({ length: 40 }, (_, i) => `line ${String(i + 1).padStart(2, '0')}`)
    await page.click('#tab-file')
    await page.fill('#open-path', 'notes/long.txt')
    await page.click('#new-file')
    await page.waitForSelector('#editor[data-path="notes/long.txt"]')
    await fillEditor(page, lines.join('\n'))
    await page.click('#review')
    await page.click('#apply')
    await page.waitForSelector('#file-status:has-text("Saved notes/long.txt")')
    await fillEditor(page, lines.map((l, i) => (i === 19 ? 'line 20 CHANGED' : l)).join('\n'))
    await page.click('#review')
    const before = page.locator('#merge-view .cm-mergeView .cm-editor').nth(0)
    await before.locator('.cm-collapsedLines').first().waitFor({ timeout: 10_000 })
    // Lines 1-16 and 24-40 are folded away: line 01 is not drawn.
    expect(await before.locator('.cm-collapsedLines').count()).toBe(2)
    expect(await before.locator('.cm-line', { hasText: 'line 01' }).count()).toBe(0)
    // Tab goes from the side's text to its first collapsed stretch, a button; Enter opens it.
    await before.locator('.cm-content').focus()
    await page.keyboard.press('Tab')
    expect(
      await page.evaluate(() => {
        const a = document.activeElement
        return a?.matches('.cm-collapsedLines') ? a.getAttribute('role') : a?.className
      }),
    ).toBe('button')
    await page.keyboard.press('Enter')
    await before.locator('.cm-line', { hasText: 'line 01' }).waitFor({ timeout: 10_000 })
    expect(await before.locator('.cm-collapsedLines').count()).toBe(1)
    // The focus is back on the text of that side, not lost to the page.
    expect(
      await page.evaluate(() =>
        document.activeElement?.matches('#merge-view .cm-mergeView .cm-editor .cm-content'),
      ),
    ).toBe(true)
  })

  it('shows the typed error for a path outside the workspace', async () => {
    await page.click('#tab-file')
    await page.fill('#open-path', '../outside.txt')
    await page.click('#open')
    const error = await page.waitForSelector('#file-status .result.failed')
    expect(await error.getAttribute('data-error-kind')).toBe('permission_denied')
    expect(await error.textContent()).toContain('escapes the workspace root')
  })

  it('asks before writing under private/ and writes once approved', async () => {
    await page.fill('#open-path', 'private/key.txt')
    await page.click('#new-file')
    await page.waitForSelector('#editor[data-path="private/key.txt"]')
    await fillEditor(page, 'secret\n')
    await page.click('#review')
    await page.click('#apply')
    await page.waitForSelector('#confirm-dialog[open]')
    expect(await page.textContent('#confirm-dialog')).toContain('private/key.txt')
    await page.click('#confirm-approve')
    await page.waitForSelector('#file-status:has-text("Saved private/key.txt")')
  })

  it('moves between panels with the arrow keys, the focus visible', async () => {
    await page.focus('#tab-file')
    await page.keyboard.press('ArrowRight')
    expect(await page.getAttribute('#tab-search', 'aria-selected')).toBe('true')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('tab-search')
    const outline = await page.$eval('#tab-search', (e) => getComputedStyle(e).outlineStyle)
    expect(outline).not.toBe('none')
    await page.keyboard.press('ArrowLeft')
    expect(await page.getAttribute('#tab-file', 'aria-selected')).toBe('true')
  })

  it('fits a narrow window without horizontal scrolling', async () => {
    await page.setViewportSize({ width: 420, height: 800 })
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    )
    expect(overflow).toBeLessThanOrEqual(0)
    await page.setViewportSize({ width: 1280, height: 800 })
  })

  it('logged no console error and no page error', () => {
    expect(demo.errors).toEqual([])
  })
})
