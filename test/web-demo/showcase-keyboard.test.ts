// The showcase panels (governance, the projection evidence and its artifact viewer, tab vs
// server, skills, semantic search, MCP servers, workflows) in a 420 px wide Chromium window,
// driven from the keyboard only, in both modes: Tab reaches each control, Enter runs it, Escape
// closes the dialogs, and no panel scrolls the page sideways, before or after its results show.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { useDemo } from './demo-harness.ts'
import { BIG_TEXT } from './showcase-helpers.ts'

const WIDTH = 420

/** Press Tab until the focused element matches `selector` (at most `max` presses). */
async function tabTo(page: Page, selector: string, max = 80): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab')
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return
  }
  throw new Error(`Tab never reached ${selector}`)
}

/** Tab to `selector` and press Enter on it. */
async function enterOn(page: Page, selector: string): Promise<void> {
  await tabTo(page, selector)
  await page.keyboard.press('Enter')
}

/** Select panel `id` with the arrow keys of the tab list, then focus stays on its tab. */
async function openPanel(page: Page, id: string): Promise<void> {
  await page.focus('[role="tab"][aria-selected="true"]')
  for (let i = 0; i < 20; i++) {
    if ((await page.getAttribute(`#tab-${id}`, 'aria-selected')) === 'true') break
    await page.keyboard.press('ArrowRight')
  }
  await page.waitForSelector(`#panel-${id}:not([hidden])`)
  expect(await page.evaluate(() => document.activeElement?.id)).toBe(`tab-${id}`)
}

/** Select `value` in the focused `<select>` by typing, as a keyboard user does. */
async function typeInto(page: Page, selector: string, text: string): Promise<void> {
  await tabTo(page, selector)
  await page.keyboard.press('Control+A')
  await page.keyboard.insertText(text)
}

/** No sideways page scroll, and every visible control of `scope` inside the window. */
async function fits(page: Page, scope: string): Promise<void> {
  const report = await page.evaluate(
    ({ scope, width }) => {
      const de = document.documentElement
      const outside = [
        ...document.querySelectorAll<HTMLElement>(
          `${scope} :is(button, input, select, textarea, a[href], [tabindex="0"])`,
        ),
      ]
        .filter((e) => {
          const b = e.getBoundingClientRect()
          return b.width > 0 && (b.left < -1 || b.right > width + 1)
        })
        .map((e) => e.id || e.className || e.tagName)
      return { overflow: de.scrollWidth - de.clientWidth, outside }
    },
    { scope, width: WIDTH },
  )
  expect(report, scope).toEqual({ overflow: 0, outside: [] })
}

describe.each(['server', 'tab'] as const)(
  'showcase panels by keyboard at 420 px, %s mode',
  (mode) => {
    let page: Page
    const dir = mkdtempSync(join(tmpdir(), `isoagent-demo-keyboard-${mode}-`))
    writeFileSync(join(dir, 'README.md'), '# keyboard\n')
    writeFileSync(join(dir, 'big.txt'), BIG_TEXT)
    mkdirSync(join(dir, '.agents/skills/key-skill'), { recursive: true })
    writeFileSync(
      join(dir, '.agents/skills/key-skill/SKILL.md'),
      '---\nname: key-skill\ndescription: Opened from the keyboard.\n---\n\nSay KEY-SKILL-BODY.\n',
    )
    const demo = useDemo({
      args: [
        '--workspace',
        dir,
        '--deny',
        'write(secrets/**)',
        '--ask',
        'write(private/**)',
        '--workflows',
      ],
      mode,
      viewport: { width: WIDTH, height: 800 },
      cleanup: () => rmSync(dir, { recursive: true, force: true }),
    })
    beforeAll(() => void ({ page } = demo))

    it('governance: Try a denied rule and run it with Enter; Escape refuses an ask', async () => {
      await openPanel(page, 'governance')
      await fits(page, '#panel-governance')
      await enterOn(page, '#gov-rules button.gov-try[data-rule="write(secrets/**)"]')
      await enterOn(page, '#gov-run')
      await page.waitForSelector('#gov-result[data-error-kind="permission_denied"]')
      await fits(page, '#panel-governance')

      await openPanel(page, 'governance')
      await enterOn(page, '#gov-rules button.gov-try[data-rule="write(private/**)"]')
      await enterOn(page, '#gov-run')
      await page.waitForSelector('#confirm-dialog[open]')
      await fits(page, '#confirm-dialog')
      await page.keyboard.press('Escape')
      await page.waitForSelector('#gov-result[data-error-kind="permission_denied"]')
      expect(await page.$('#confirm-dialog[open]')).toBeNull()
    })

    it('evidence: Enter opens the cut result’s artifact, Escape closes it', async () => {
      if (mode === 'tab') {
        // The tab's workspace is IndexedDB: write the big file there first.
        await openPanel(page, 'governance')
        await page.selectOption('#gov-tool', 'write')
        await page.fill('#gov-args', JSON.stringify({ file_path: 'big.txt', content: BIG_TEXT }))
        await enterOn(page, '#gov-run')
        await page.waitForSelector('#gov-result .result.ok')
      }
      await openPanel(page, 'governance')
      await tabTo(page, '#gov-tool')
      await page.keyboard.type('read')
      await typeInto(page, '#gov-args', '{"file_path":"big.txt"}')
      await enterOn(page, '#gov-run')
      await page.waitForSelector('#gov-result .result.ok')
      await page.waitForSelector('#timeline li[data-tool="read"] .evidence.cut .artifact-link')
      await enterOn(page, '#timeline li[data-tool="read"] .evidence.cut .artifact-link')
      await page.waitForSelector('#artifact-dialog[open] #artifact-text')
      await fits(page, '#artifact-dialog')
      await page.keyboard.press('Escape')
      await page.waitForSelector('#artifact-dialog:not([open])', { state: 'attached' })
      expect(
        await page.evaluate(() => document.activeElement?.classList.contains('artifact-link')),
      ).toBe(true)
      await fits(page, 'body')
    })

    it('tab vs server: a preset and Run by Enter, both sides shown side by side', async () => {
      await openPanel(page, 'compare')
      await fits(page, '#panel-compare')
      await enterOn(page, '.compare-preset')
      await enterOn(page, '#compare-run')
      await page.waitForSelector('#compare-verdict[data-match]')
      await page.waitForSelector('#compare-tab .result')
      await page.waitForSelector('#compare-server .result')
      await fits(page, '#panel-compare')
    })

    it('skills: search by Enter (and open the workspace’s skill on the server)', async () => {
      await openPanel(page, 'skills')
      await fits(page, '#panel-skills')
      if (mode === 'server') {
        await enterOn(page, '#skills-list li[data-skill="key-skill"] .skill-open')
        await page.waitForSelector('#skills-result .output:has-text("KEY-SKILL-BODY")')
        await openPanel(page, 'skills')
      }
      await typeInto(page, '#skills-query', 'key')
      await enterOn(page, '#skills-search')
      // The tab's workspace has no skill, so no search_skills: the panel says so.
      await page.waitForSelector(
        mode === 'server'
          ? '#skills-result .output:has-text("key-skill")'
          : '#skills-result [data-note="missing"]',
      )
      await fits(page, '#panel-skills')
    })

    it('semantic search: a grep query run by Enter', async () => {
      await openPanel(page, 'retrieval')
      await fits(page, '#panel-retrieval')
      await typeInto(page, '#retrieval-query', 'keyboard')
      await enterOn(page, '#retrieval-run')
      await page.waitForSelector('#retrieval-result .result')
      await fits(page, '#panel-retrieval')
      // This tab's embeddings endpoint form is reachable too.
      if (mode === 'tab')
        for (const id of ['#embed-url', '#embed-model', '#embed-key', '#embed-use'])
          await tabTo(page, id)
    })

    it('MCP servers: the add form is reachable (server) or the panel says what it needs', async () => {
      await openPanel(page, 'mcp')
      await fits(page, '#panel-mcp')
      if (mode === 'tab') {
        expect(await page.textContent('#mcp-status')).toContain('MCP servers need a server')
        return
      }
      await page.waitForSelector('#mcp-list [data-note]')
      await tabTo(page, '#mcp-name')
      await tabTo(page, '#mcp-url')
      await tabTo(page, '#mcp-add')
    })

    it('workflows: Run by Enter, the steps table fits', async () => {
      await openPanel(page, 'workflows')
      await fits(page, '#panel-workflows')
      await enterOn(page, '#workflow-run')
      await page.waitForSelector('#workflow-summary[data-status="completed"]', { timeout: 30_000 })
      await fits(page, '#panel-workflows')
    })

    it('logged no console or page error', () => {
      expect(demo.errors).toEqual([])
    })
  },
)
