// `npm start` with a model key, as a new user runs it, in Chromium: bin/start.mjs picks the model
// from the environment (OPENAI_API_KEY, ISOAGENT_MODEL, ISOAGENT_MODEL_BASE_URL pointing at the
// loopback fake provider) and serves the sample project with workflows enabled. The server-mode
// page chats with an agent whose tool call streams into the chat and the timeline, and the
// workflows panel runs its workflow over the server and shows the steps live.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeProvider, type FakeProvider } from '../llm/fake-provider.ts'
import {
  gotoDemo,
  openDemoBrowser,
  startDemoServer,
  type DemoBrowser,
  type DemoServer,
} from './demo-harness.ts'
import { showPanel } from './showcase-helpers.ts'

let fake: FakeProvider
let server: DemoServer
let demo: DemoBrowser
let page: Page

beforeAll(async () => {
  fake = await startFakeProvider()
  server = await startDemoServer(
    [],
    {
      OPENAI_API_KEY: 'sk-start-0123456789',
      ISOAGENT_MODEL: 'start-model',
      ISOAGENT_MODEL_BASE_URL: fake.baseURL,
    },
    { entry: 'start' },
  )
  expect(server.banner).toContain(`model:  openai start-model at ${fake.baseURL}`)
  expect(server.banner).not.toContain('sk-start-0123456789')
  demo = await openDemoBrowser()
  page = demo.page
  await gotoDemo(page, server.pageUrl('server'), 'server')
}, 90_000)

afterAll(async () => {
  await demo?.close()
  await server?.stop()
  await fake?.close()
})

describe('npm start with a model key (Chromium, server mode)', () => {
  it('chats: the tool call streams into the chat and the timeline, then the answer', async () => {
    fake.program('start-model', [
      {
        toolCalls: [
          { name: 'search', arguments: JSON.stringify({ mode: 'grep', query: 'sample-project' }) },
        ],
      },
      {
        text: 'The sample project names itself.',
        chunks: ['The sample ', 'project names itself.'],
      },
    ])
    await page.click('#tab-chat')
    expect(await page.locator('#chat-settings').count()).toBe(0)
    await page.fill('#chat-prompt', 'Where does the project name itself?')
    await page.click('#chat-send')
    const answer = page.locator('#chat-log li.msg.assistant').last()
    const call = answer.locator('.chat-tool[data-tool="search"]')
    await call.waitFor({ timeout: 20_000 })
    await page.locator('#chat-log li.msg.assistant[data-state="done"]').waitFor({ timeout: 20_000 })
    expect(await call.getAttribute('data-exit-code')).toBe('0')
    expect(await call.locator('.chat-tool-output').textContent()).toContain('README.md')
    expect(await answer.locator('.msg-text').last().textContent()).toBe(
      'The sample project names itself.',
    )
    // The agent's call is a session event: the timeline shows it completed.
    await page
      .locator(
        '#timeline li[data-tool="search"]:has(.args:has-text("sample-project")) .call-state:has-text("completed")',
      )
      .waitFor({ timeout: 10_000 })
    // The key from the environment went to the fake provider; the model is the one named.
    const sent = fake.requests.filter((r) => r.body.model === 'start-model')
    expect(sent).toHaveLength(2)
    expect(sent[0]!.headers.authorization).toBe('Bearer sk-start-0123456789')
    expect(JSON.stringify(sent[1]!.body.messages)).toContain('README.md')
    expect(demo.errors).toEqual([])
  }, 60_000)

  it('runs the workflows panel workflow over the server and shows its steps live', async () => {
    await showPanel(page, 'workflows')
    // Record every state a step row passes through, to see the steps arrive live.
    await page.evaluate(() => {
      const seen: string[] = []
      ;(window as unknown as { seenStepStates: string[] }).seenStepStates = seen
      new MutationObserver(() => {
        for (const li of document.querySelectorAll<HTMLElement>('#workflow-steps li[data-step]'))
          seen.push(`${li.dataset.step}:${li.dataset.state}`)
      }).observe(document.body, {
        subtree: true,
        childList: true,
        attributes: true,
        attributeFilter: ['data-state'],
      })
    })
    await page.fill('#workflow-run-id', 'npm-start-run')
    await page.click('#workflow-run')
    await page.waitForSelector('#workflow-summary[data-status="completed"]', { timeout: 30_000 })
    const seen = await page.evaluate(
      () => (window as unknown as { seenStepStates: string[] }).seenStepStates,
    )
    for (const step of ['md', 'js', 'json']) {
      expect(seen).toContain(`${step}:started`)
      expect(await page.getAttribute(`#workflow-steps li[data-step="${step}"]`, 'data-state')).toBe(
        'completed',
      )
      expect(await page.textContent(`#workflow-steps li[data-step="${step}"]`)).toMatch(
        /completed in \d+ ms/,
      )
      expect(await page.textContent(`.workflow-table tr[data-step="${step}"]`)).toContain(
        'completed',
      )
    }
    expect(await page.textContent('#workflow-result .output')).toContain('"pattern": "**/*.md"')
    // The run is the server's: its journal is in the sample project's copy on disk.
    const copy = /a copy of examples\/sample-project in (\S+)/.exec(server.banner)![1]!
    const journal = readFileSync(join(copy, '.a3s/workflow/npm-start-run.jsonl'), 'utf8')
    expect(journal).toContain('run_completed')
    expect(demo.errors).toEqual([])
  }, 60_000)
})
