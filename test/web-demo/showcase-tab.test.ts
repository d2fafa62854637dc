// The "show what is special" panels in "this tab" mode (Chromium, the built demo served by the
// built `isoagent serve`): governance with the tab session's rules, projection evidence with
// the cut result's artifact read from the tab's session, the same call in the tab and on the
// server, a skill written into IndexedDB and found after a reload, a dynamic_workflow run's
// steps, and the panels that say what needs a server or an embeddings provider.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { useDemo } from './demo-harness.ts'
import { BIG_TEXT, governedCall, governedResult, showPanel, tryRule } from './showcase-helpers.ts'

let page: Page
const dir = mkdtempSync(join(tmpdir(), 'isoagent-demo-showcase-tab-'))
writeFileSync(join(dir, 'shared.txt'), 'on the server\n')

const demo = useDemo({
  args: ['--workspace', dir],
  mode: 'tab',
  cleanup: () => rmSync(dir, { recursive: true, force: true }),
})
beforeAll(() => void ({ page } = demo))

describe('showcase panels, this tab (Chromium)', () => {
  it('lists the tab session’s deny and ask rules', async () => {
    await showPanel(page, 'governance')
    await page.waitForSelector('#gov-rules')
    expect(await page.getAttribute('li[data-rule="write(secrets/**)"]', 'data-decision')).toBe(
      'deny',
    )
    expect(await page.getAttribute('li[data-rule="write(private/**)"]', 'data-decision')).toBe(
      'ask',
    )
  })

  it('a denied call shows its typed refusal', async () => {
    await tryRule(page, 'write(secrets/**)')
    expect(await governedResult(page)).toBe('permission_denied')
    expect(await page.textContent('#gov-result')).toContain('Refused by governance')
    await governedCall(page, 'read', { file_path: 'secrets/demo-note.txt' })
    // Nothing was written: the file does not exist in the tab.
    expect(await governedResult(page)).toBe('not_found')
  })

  it('an ask call is approved in the dialog and runs', async () => {
    await tryRule(page, 'write(private/**)')
    await page.waitForSelector('#confirm-dialog[open]')
    await page.click('#confirm-approve')
    expect(await governedResult(page)).toBe('')
    await governedCall(page, 'read', { file_path: 'private/demo-note.txt' })
    expect(await governedResult(page)).toBe('')
    expect(await page.textContent('#gov-result .output')).toContain(
      'written by the governance panel',
    )
  })

  it('shows the evidence of a cut result and opens its artifact from the tab session', async () => {
    await governedCall(page, 'write', { file_path: 'big.txt', content: BIG_TEXT })
    expect(await governedResult(page)).toBe('')
    await governedCall(page, 'read', { file_path: 'big.txt' })
    expect(await governedResult(page)).toBe('')
    const evidence = page.locator('#timeline li[data-tool="read"] .evidence.cut').first()
    await evidence.waitFor()
    expect(await evidence.getAttribute('data-loss-mode')).toBe('bounded_preview')
    const [, original] = /projection: (\d+) B → 102400 B/.exec((await evidence.textContent())!)!
    await evidence.locator('.artifact-link').click()
    await page.waitForSelector('#artifact-dialog[open] #artifact-text')
    expect(await page.getAttribute('#artifact-dialog .artifact-meta', 'data-bytes')).toBe(original)
    expect(await page.textContent('#artifact-text')).toContain('line 2000 ')
    await page.keyboard.press('Escape')
    expect(await page.$('#artifact-dialog[open]')).toBeNull()
  })

  it('runs the same call in the tab and on the server', async () => {
    await showPanel(page, 'compare')
    await page.fill('#compare-args', '{"file_path":"shared.txt"}')
    await page.selectOption('#compare-tool', 'read')
    await page.click('#compare-run')
    // Only the server has shared.txt: both results show, and they differ.
    await page.waitForSelector('#compare-verdict[data-match="different"]')
    expect(await page.textContent('#compare-server .output')).toContain('on the server')
    expect(await page.getAttribute('#compare-tab .result', 'data-error-kind')).toBe('not_found')
    // Write the same content on both sides, then the same read matches.
    await page.selectOption('#compare-tool', 'write')
    await page.fill('#compare-args', '{"file_path":"shared.txt","content":"the same\\n"}')
    await page.click('#compare-run')
    await page.waitForSelector('#compare-tab .result.ok')
    expect(readFileSync(join(dir, 'shared.txt'), 'utf8')).toBe('the same\n')
    await page.selectOption('#compare-tool', 'read')
    await page.fill('#compare-args', '{"file_path":"shared.txt"}')
    await page.click('#compare-run')
    await page.waitForSelector('#compare-verdict[data-match="same"]')
    expect(await page.textContent('#compare-tab .output')).toContain('the same')
  })

  it('runs a dynamic_workflow and shows its steps', async () => {
    await showPanel(page, 'workflows')
    await page.fill('#workflow-run-id', 'showcase-run')
    await page.click('#workflow-run')
    await page.waitForSelector('#workflow-summary[data-status="completed"]', { timeout: 30_000 })
    for (const step of ['md', 'js', 'json']) {
      expect(await page.getAttribute(`#workflow-steps li[data-step="${step}"]`, 'data-state')).toBe(
        'completed',
      )
      expect(await page.textContent(`.workflow-table tr[data-step="${step}"]`)).toContain(
        'completed',
      )
    }
    expect(await page.textContent('#workflow-result .output')).toContain('"pattern": "**/*.md"')
    // The journal is a file of the workspace.
    await governedCall(page, 'read', { file_path: '.a3s/workflow/showcase-run.jsonl' })
    expect(await governedResult(page)).toBe('')
    expect(await page.textContent('#gov-result .output')).toContain('run_completed')
  })

  it('says MCP needs a server and semantic search an embeddings provider', async () => {
    await showPanel(page, 'mcp')
    expect(await page.textContent('#mcp-status')).toContain('MCP servers need a server')
    await showPanel(page, 'retrieval')
    expect(await page.textContent('#retrieval-status')).toContain(
      'No embeddings provider is configured',
    )
    await page.selectOption('#retrieval-mode', 'hybrid')
    await page.fill('#retrieval-query', 'governance note')
    await page.click('#retrieval-run')
    await page.waitForSelector('#retrieval-result .result.failed')
    expect(await page.textContent('#retrieval-result')).toContain(
      'did not enable semantic retrieval',
    )
  })

  it('writes an example skill, finds it after a reload and opens it', async () => {
    await showPanel(page, 'skills')
    // No skill in this workspace yet: the panel says what to do and offers an example.
    await page.click('#skills-example')
    await page.click('#skills-reload')
    await page.waitForSelector('body[data-ready="tab"]', { timeout: 30_000 })
    await showPanel(page, 'skills')
    await page.waitForSelector('#skills-list li[data-skill="release-notes"]')
    await page.click('#skills-list li[data-skill="release-notes"] .skill-open')
    await page.waitForSelector('#skills-result .result.ok')
    expect(await page.textContent('#skills-result .output')).toContain('# Skill: release-notes')
    expect(await page.textContent('#skills-result .output')).toContain('RELEASE_NOTES.md')
    // The tab wrote nothing to the server's disk.
    expect(existsSync(join(dir, '.agents'))).toBe(false)
  })

  it('logged no console or page error', () => {
    expect(demo.errors).toEqual([])
  })
})
