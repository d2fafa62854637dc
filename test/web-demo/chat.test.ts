// The web demo's chat panel in Chromium, against the built demo: in "this tab" mode the page
// calls the loopback fake provider itself (another origin, so over CORS) with the model settings
// the user typed; in "server" mode the turn goes through POST /v1/sessions/:id/messages of an
// `isoagent serve --model-provider …` (the built CLI, its key from the environment), and a server
// without a model says how to give it one.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
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

const KEY = 'sk-tab-only-0123456789abcdef'

let fake: FakeProvider
let plain: DemoServer
let withModel: DemoServer
let demo: DemoBrowser
let page: Page
const dir = mkdtempSync(join(tmpdir(), 'isoagent-demo-chat-'))
writeFileSync(join(dir, 'README.md'), '# served with a model\n')

beforeAll(async () => {
  fake = await startFakeProvider()
  plain = await startDemoServer(['--workspace', dir])
  withModel = await startDemoServer(
    [
      '--workspace',
      dir,
      '--model-provider',
      'openai',
      '--model-base-url',
      fake.baseURL,
      '--model',
      'server-model',
    ],
    { ISOAGENT_MODEL_KEY: 'sk-server', OPENAI_API_KEY: 'sk-not-this-one' },
  )
  expect(withModel.banner).toContain(`model:  openai server-model at ${fake.baseURL}`)
  expect(withModel.banner).not.toContain('sk-server')
  demo = await openDemoBrowser()
  page = demo.page
}, 60_000)

afterAll(async () => {
  await demo?.close()
  await withModel?.stop()
  await plain?.stop()
  await fake?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function openTabChat(): Promise<void> {
  await gotoDemo(page, plain.pageUrl('tab'), 'tab')
  await page.click('#tab-chat')
  await page.selectOption('#chat-provider', 'openai')
  await page.fill('#chat-base-url', fake.baseURL)
  await page.fill('#chat-model', 'tab-model')
  await page.fill('#chat-key', KEY)
}

async function say(text: string): Promise<void> {
  await page.fill('#chat-prompt', text)
  await page.click('#chat-send')
}

const lastAnswer = () => page.locator('#chat-log li.msg.assistant').last()

describe('web demo chat panel (Chromium)', () => {
  it('in this tab: a turn writes and reads a file through tools, then answers', async () => {
    fake.program('tab-model', [
      {
        toolCalls: [
          {
            name: 'write',
            arguments: JSON.stringify({ file_path: 'chat/note.txt', content: 'hello from chat' }),
          },
          { name: 'read', arguments: JSON.stringify({ file_path: 'chat/note.txt' }) },
        ],
      },
      { text: 'The note says hello from chat.' },
    ])
    await openTabChat()
    await say('Write a note and read it back.')
    const answer = lastAnswer()
    await page.locator('#chat-log li.msg.assistant[data-state="done"]').waitFor({ timeout: 20_000 })
    const read = answer.locator('.chat-tool[data-tool="read"]')
    expect(await read.getAttribute('data-exit-code')).toBe('0')
    expect(await read.locator('.chat-tool-output').textContent()).toContain('hello from chat')
    expect(await read.locator('summary').textContent()).toContain('(exitCode 0)')
    expect(
      await answer.locator('.chat-tool[data-tool="write"]').getAttribute('data-exit-code'),
    ).toBe('0')
    expect(await answer.locator('.msg-text').last().textContent()).toBe(
      'The note says hello from chat.',
    )
    expect(await page.textContent('#chat-log li.msg.user')).toBe('Write a note and read it back.')
    // The calls are session events: they show in the timeline too; the file tree has the file.
    await page
      .locator(
        '#timeline li[data-tool="read"]:has(.args:has-text("chat/note.txt")) .call-state:has-text("completed")',
      )
      .waitFor()
    await page
      .locator('.tree-dir[data-path="chat"], .tree-file[data-path="chat/note.txt"]')
      .first()
      .waitFor()

    // The page itself called the fake (another origin, through CORS), with the typed key.
    const [first, second] = fake.requests.filter((r) => r.body.model === 'tab-model')
    expect(first!.headers.origin).toBe(plain.url)
    expect(first!.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(JSON.stringify(second!.body.messages)).toContain('hello from chat')
    // The key lives in this tab's sessionStorage, never in localStorage.
    const storage = await page.evaluate(() => ({
      local: JSON.stringify({ ...localStorage }),
      session: JSON.stringify({ ...sessionStorage }),
    }))
    expect(storage.local).not.toContain(KEY)
    expect(storage.session).toContain(KEY)
    expect(demo.errors).toEqual([])
  }, 60_000)

  it('in this tab: Stop cancels a slow stream, and a model failure shows its kind', async () => {
    fake.program('tab-model', [
      { text: 'slow '.repeat(50), chunks: Array(50).fill('slow '), delayMs: 200 },
      { text: 'never shown', errorAfterEvents: 2, errorKind: 'invalid_request' },
    ])
    await page.reload()
    await page.waitForSelector('body[data-ready="tab"]')
    await page.click('#tab-chat')
    // The settings came back from sessionStorage after the reload.
    expect(await page.inputValue('#chat-key')).toBe(KEY)
    await say('Talk slowly.')
    await lastAnswer().locator('.msg-text:has-text("slow")').waitFor({ timeout: 10_000 })
    const started = Date.now()
    await page.click('#chat-stop')
    await page.locator('#chat-error [data-error-kind="cancelled"]').waitFor({ timeout: 5_000 })
    expect(Date.now() - started).toBeLessThan(3_000)
    expect(await lastAnswer().getAttribute('data-state')).toBe('failed')
    expect((await lastAnswer().textContent())!.length).toBeLessThan('slow '.repeat(50).length)
    expect(await page.isEnabled('#chat-send')).toBe(true)

    await say('Fail, please.')
    const failure = page.locator('#chat-error .chat-error')
    await failure.waitFor({ timeout: 10_000 })
    expect(await failure.getAttribute('data-error-kind')).toBe('invalid_argument')
    expect(demo.errors).toEqual([])
  }, 60_000)

  it('in server mode: the turn streams from POST /messages into the panel and the timeline', async () => {
    fake.program('server-model', [
      { toolCalls: [{ name: 'read', arguments: JSON.stringify({ file_path: 'README.md' }) }] },
      { text: 'The README is a title.', chunks: ['The README ', 'is a title.'] },
    ])
    await gotoDemo(page, withModel.pageUrl('server'), 'server')
    await page.click('#tab-chat')
    expect(await page.locator('#chat-settings').count()).toBe(0)
    await say('What is in the README?')
    const answer = lastAnswer()
    await page.locator('#chat-log li.msg.assistant[data-state="done"]').waitFor({ timeout: 20_000 })
    const read = answer.locator('.chat-tool[data-tool="read"]')
    expect(await read.getAttribute('data-exit-code')).toBe('0')
    expect(await read.locator('.chat-tool-output').textContent()).toContain('# served with a model')
    expect(await answer.locator('.msg-text').textContent()).toBe('The README is a title.')
    // Two completed reads: the page opening README.md at load, and the turn's.
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('#timeline li[data-tool="read"] .call-state')].filter((e) =>
          e.textContent?.includes('completed'),
        ).length === 2,
    )
    // The server's key went to the fake, not one from the page.
    const sent = fake.requests.filter((r) => r.body.model === 'server-model')
    expect(sent).toHaveLength(2)
    expect(sent[0]!.headers.authorization).toBe('Bearer sk-server')
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# served with a model\n')
    expect(demo.errors).toEqual([])
  }, 60_000)

  it('in server mode: Stop closes the stream and the server cancels the turn', async () => {
    fake.program('server-model', [
      { text: 'tick '.repeat(40), chunks: Array(40).fill('tick '), delayMs: 200 },
      { text: 'after the stop' },
    ])
    await say('Count slowly.')
    await lastAnswer().locator('.msg-text:has-text("tick")').waitFor({ timeout: 10_000 })
    await page.click('#chat-stop')
    await page.locator('#chat-error [data-error-kind="cancelled"]').waitFor({ timeout: 5_000 })
    // The session is free again at once: the next turn is not refused with turn_in_progress.
    await say('Say something.')
    await page
      .locator('#chat-log li.msg.assistant[data-state="done"] .msg-text:has-text("after the stop")')
      .waitFor({ timeout: 10_000 })
    expect(demo.errors).toEqual([])
  }, 60_000)

  it('in server mode without a model: the panel says so and offers nothing else', async () => {
    await gotoDemo(page, plain.pageUrl('server'), 'server')
    await page.click('#tab-chat')
    await say('Anyone there?')
    const note = page.locator('#chat-not-configured')
    await note.waitFor({ timeout: 10_000 })
    expect(await note.textContent()).toContain('no model')
    expect(await note.textContent()).toContain('--model-provider')
    expect(await page.locator('#panel-chat textarea, #panel-chat button').count()).toBe(0)
    // The only console line is Chromium's own for the 400 answer of POST …/messages.
    expect(demo.errors.every((e) => /status of 400/.test(e))).toBe(true)
    expect(demo.errors.length).toBeLessThanOrEqual(1)
  }, 60_000)
})
