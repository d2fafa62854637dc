// The chat panel's tool calls as they happen (Chromium, the built demo, the loopback fake
// provider), in both modes: a tool call and its result show in the chat and in the timeline
// while the model's next stream is still open (the fake holds it until the test has seen them),
// then the answer follows; and a model calling `Skill` runs a skill of the workspace, its result
// in the timeline before the answer.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeProvider, type FakeProvider } from '../llm/fake-provider.ts'
import { useDemo } from './demo-harness.ts'

let fake: FakeProvider
beforeAll(async () => {
  fake = await startFakeProvider()
})
afterAll(() => fake?.close())

/** A promise and the function settling it. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

describe.each(['server', 'tab'] as const)('chat tool calls as they happen, %s mode', (mode) => {
  let page: Page
  const model = `${mode}-model`
  const dir = mkdtempSync(join(tmpdir(), `isoagent-demo-chat-timeline-${mode}-`))
  writeFileSync(join(dir, 'README.md'), '# chat timeline\n')
  mkdirSync(join(dir, '.agents/skills/release-notes'), { recursive: true })
  writeFileSync(
    join(dir, '.agents/skills/release-notes/SKILL.md'),
    '---\nname: release-notes\ndescription: Write release notes. Use before a release.\n---\n\n' +
      'Write RELEASE_NOTES.md from the git log.\n',
  )
  const demo = useDemo({
    args: () => [
      '--workspace',
      dir,
      ...['--model-provider', 'openai', '--model-base-url', fake.baseURL, '--model', model],
    ],
    env: { ISOAGENT_MODEL_KEY: 'sk-server' },
    mode,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  })
  beforeAll(async () => {
    page = demo.page
    if (mode === 'server') return
    // The tab's own workspace gets the same skill (the panel's example), found after a reload.
    await page.click('#tab-skills')
    await page.click('#skills-example')
    await page.click('#skills-reload')
    await page.waitForSelector('body[data-ready="tab"]', { timeout: 30_000 })
  })

  async function say(text: string): Promise<void> {
    await page.click('#tab-chat')
    if (mode === 'tab') {
      await page.selectOption('#chat-provider', 'openai')
      await page.fill('#chat-base-url', fake.baseURL)
      await page.fill('#chat-model', model)
      await page.fill('#chat-key', 'sk-tab')
    }
    await page.fill('#chat-prompt', text)
    await page.click('#chat-send')
  }

  const answer = () => page.locator('#chat-log li.msg.assistant').last()

  it('shows a tool call and its result while the model still streams, then the answer', async () => {
    const held = gate()
    fake.program(model, [
      {
        toolCalls: [
          {
            name: 'write',
            arguments: JSON.stringify({ file_path: 'chat/held.txt', content: 'HELD-NOTE' }),
          },
        ],
      },
      { text: 'Wrote the note.', hold: held.promise },
    ])
    const before = fake.requests.length
    await say('Write a note.')
    try {
      const call = answer().locator('.chat-tool[data-tool="write"][data-exit-code="0"]')
      await call.waitFor({ timeout: 20_000 })
      expect(await call.locator('summary').textContent()).toContain('chat/held.txt')
      await page
        .locator(
          '#timeline li[data-tool="write"]:has(.args:has-text("chat/held.txt")) .call-state:has-text("completed")',
        )
        .waitFor()
      // The model's second stream is open (the fake got the request, holds its events): the
      // turn is still streaming and no answer text is shown yet.
      await expect.poll(() => fake.requests.length - before).toBe(2)
      expect(await answer().getAttribute('data-state')).toBe('streaming')
      expect(await answer().locator('.msg-text').count()).toBe(0)
    } finally {
      held.open()
    }
    await page.locator('#chat-log > li.msg.assistant:last-child[data-state="done"]').waitFor()
    expect(await answer().locator('.msg-text').last().textContent()).toBe('Wrote the note.')
    expect(demo.errors).toEqual([])
  }, 60_000)

  it('runs a skill the model calls with Skill: its result in the timeline, then the answer', async () => {
    // With a model, Skill runs a sub-agent on the skill's instructions (the fake's second
    // answer) and returns its final answer; the turn's model then answers (the third).
    fake.program(model, [
      {
        toolCalls: [{ name: 'Skill', arguments: JSON.stringify({ skill_name: 'release-notes' }) }],
      },
      { text: 'SKILL-RESULT: the notes are drafted.' },
      { text: 'Following the release-notes skill.' },
    ])
    const before = fake.requests.length
    await say('Prepare the release notes.')
    const call = answer().locator('.chat-tool[data-tool="Skill"]')
    await call.waitFor({ timeout: 20_000 })
    await page.locator('#chat-log > li.msg.assistant:last-child[data-state="done"]').waitFor()
    expect(await call.getAttribute('data-exit-code')).toBe('0')
    expect(await call.locator('.chat-tool-output').textContent()).toContain(
      'SKILL-RESULT: the notes are drafted.',
    )
    const entry = page.locator('#timeline li[data-tool="Skill"]').last()
    expect(await entry.locator('.call-state').textContent()).toContain('completed')
    expect(await entry.textContent()).toContain('release-notes')
    expect(await answer().locator('.msg-text').last().textContent()).toBe(
      'Following the release-notes skill.',
    )
    // The sub-agent got the skill's instructions; the turn's model got the skill's result.
    const [, sub, last] = fake.requests.slice(before)
    expect(JSON.stringify(sub!.body.messages)).toContain('RELEASE_NOTES.md')
    expect(JSON.stringify(last!.body.messages)).toContain('SKILL-RESULT')
    expect(demo.errors).toEqual([])
  }, 60_000)
})
