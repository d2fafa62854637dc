// The "show what is special" panels in server mode (Chromium, the built demo served by the
// built `isoagent serve`): governance (a deny rule's typed refusal, an ask rule's dialog),
// projection evidence with the cut result's artifact, the same call in the tab and on the
// server, and the skills, semantic search, MCP and workflow panels.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { useDemo } from './demo-harness.ts'
import { BIG_TEXT, governedCall, governedResult, showPanel, tryRule } from './showcase-helpers.ts'

let page: Page
const dir = mkdtempSync(join(tmpdir(), 'isoagent-demo-showcase-'))
writeFileSync(join(dir, 'README.md'), '# showcase\n')
writeFileSync(join(dir, 'big.txt'), BIG_TEXT)
mkdirSync(join(dir, '.agents/skills/fixture-skill'), { recursive: true })
writeFileSync(
  join(dir, '.agents/skills/fixture-skill/SKILL.md'),
  '---\nname: fixture-skill\ndescription: Checks the showcase fixture. Use in tests.\n' +
    'allowed-tools: read\n---\n\nRead README.md and say FIXTURE-SKILL-BODY.\n',
)

const demo = useDemo({
  args: ['--workspace', dir, '--deny', 'write(secrets/**)', '--ask', 'write(private/**)'],
  mode: 'server',
  cleanup: () => rmSync(dir, { recursive: true, force: true }),
})
beforeAll(() => void ({ page } = demo))

describe('showcase panels, server mode (Chromium)', () => {
  it("lists the server session's rules", async () => {
    await showPanel(page, 'governance')
    await page.waitForSelector('#gov-rules')
    expect(await page.getAttribute('li[data-rule="write(secrets/**)"]', 'data-decision')).toBe(
      'deny',
    )
    expect(await page.getAttribute('li[data-rule="write(private/**)"]', 'data-decision')).toBe(
      'ask',
    )
  })

  it('a denied call shows its typed refusal and writes nothing', async () => {
    await tryRule(page, 'write(secrets/**)')
    expect(await governedResult(page)).toBe('permission_denied')
    expect(await page.textContent('#gov-result')).toContain('write(secrets/**)')
    expect(existsSync(join(dir, 'secrets'))).toBe(false)
    // The timeline shows the denial too.
    await page.waitForSelector('#timeline li.denied[data-tool="write"]')
  })

  it('an ask call waits for the dialog, runs once approved, is refused when declined', async () => {
    await tryRule(page, 'write(private/**)')
    await page.waitForSelector('#confirm-dialog[open]')
    expect(await page.textContent('#confirm-dialog')).toContain('private/demo-note.txt')
    await page.click('#confirm-approve')
    expect(await governedResult(page)).toBe('')
    expect(readFileSync(join(dir, 'private/demo-note.txt'), 'utf8')).toBe(
      'written by the governance panel\n',
    )

    await governedCall(page, 'write', { file_path: 'private/refused.txt', content: 'no\n' })
    await page.waitForSelector('#confirm-dialog[open]')
    await page.click('#confirm-refuse')
    expect(await governedResult(page)).toBe('permission_denied')
    expect(existsSync(join(dir, 'private/refused.txt'))).toBe(false)
  })

  it('shows the evidence of a cut result and opens its artifact', async () => {
    await governedCall(page, 'read', { file_path: 'big.txt' })
    await governedResult(page)
    const evidence = page.locator('#timeline li[data-tool="read"] .evidence.cut').first()
    await evidence.waitFor()
    expect(await evidence.getAttribute('data-loss-mode')).toBe('bounded_preview')
    // read numbers its lines, so the original is the file and the line numbers; the preview
    // keeps the conservative policy's 100 KiB.
    const [, original] = /projection: (\d+) B → 102400 B/.exec((await evidence.textContent())!)!
    expect(Number(original)).toBeGreaterThan(BIG_TEXT.length)
    await evidence.locator('.artifact-link').click()
    await page.waitForSelector('#artifact-dialog[open] #artifact-text')
    expect(await page.getAttribute('#artifact-dialog .artifact-meta', 'data-bytes')).toBe(original)
    const text = await page.textContent('#artifact-text')
    // The last line, which the preview cut, is in the full original.
    expect(text).toContain('line 2000 ')
    await page.click('#artifact-close')
    expect(await page.$('#artifact-dialog[open]')).toBeNull()
  })

  it('runs the same call in the tab and on the server, side by side', async () => {
    await showPanel(page, 'compare')
    await page.selectOption('#compare-tool', 'write')
    await page.fill('#compare-args', '{"file_path":"same.txt","content":"one file, two places\\n"}')
    await page.click('#compare-run')
    await page.waitForSelector('#compare-verdict[data-match]')
    await page.selectOption('#compare-tool', 'read')
    await page.fill('#compare-args', '{"file_path":"same.txt"}')
    await page.click('#compare-run')
    await page.waitForSelector('#compare-tab .result.ok')
    await page.waitForSelector('#compare-server .result.ok')
    expect(await page.textContent('#compare-tab .output')).toContain('one file, two places')
    expect(await page.textContent('#compare-server .output')).toContain('one file, two places')
    expect(await page.getAttribute('#compare-verdict', 'data-match')).toBe('same')
    // A file only the server has: the tab side fails, and the verdict says they differ.
    await page.fill('#compare-args', '{"file_path":"README.md"}')
    await page.click('#compare-run')
    await page.waitForSelector('#compare-verdict[data-match="different"]')
    expect(await page.textContent('#compare-server .output')).toContain('# showcase')
    expect(await page.getAttribute('#compare-tab .result', 'data-exit-code')).toBe('1')
  })

  it('lists the skill of the workspace and opens it with the Skill tool', async () => {
    await showPanel(page, 'skills')
    await page.waitForSelector('#skills-list li[data-skill="fixture-skill"]')
    await page.click('#skills-list li[data-skill="fixture-skill"] .skill-open')
    await page.waitForSelector('#skills-result .result.ok')
    expect(await page.textContent('#skills-result .output')).toContain('FIXTURE-SKILL-BODY')
    await page.fill('#skills-query', 'fixture')
    await page.click('#skills-search')
    await page.waitForSelector('#skills-result .output:has-text("fixture-skill")')
  })

  it('says that no embeddings provider is configured and shows the typed error', async () => {
    await showPanel(page, 'retrieval')
    expect(await page.textContent('#retrieval-status')).toContain(
      'No embeddings provider is configured',
    )
    await page.selectOption('#retrieval-mode', 'semantic')
    await page.fill('#retrieval-query', 'where is the readme')
    await page.click('#retrieval-run')
    await page.waitForSelector('#retrieval-result .result.failed')
    expect(await page.textContent('#retrieval-result')).toContain(
      'did not enable semantic retrieval',
    )
    await page.selectOption('#retrieval-mode', 'grep')
    await page.fill('#retrieval-query', 'showcase')
    await page.click('#retrieval-run')
    await page.waitForSelector('#retrieval-result .output:has-text("README.md")')
  })

  it('lists MCP servers (none here) and says when a session has no workflows', async () => {
    await showPanel(page, 'mcp')
    await page.waitForSelector('#mcp-list [data-note="hint"]')
    expect(await page.textContent('#mcp-list')).toContain('No MCP server in this session')
    await showPanel(page, 'workflows')
    expect(await page.textContent('#workflow-status')).toContain('does not offer dynamic_workflow')
  })

  it('logged no console or page error', () => {
    expect(demo.errors).toEqual([])
  })
})
