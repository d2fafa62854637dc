// The agent loop end to end against the scripted loopback fake of both providers' wire
// protocols, on every workspace kind: memory, local disk, S3 (s3rver) and browser (lightning-fs
// on fake-indexeddb).
import '../conformance/browser-env.ts'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { S3Client } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  Agent,
  anthropic,
  memoryWorkspace,
  openAICompatible,
  type AgentEvent,
  type LanguageModel,
  type TaskItemOutcome,
  type WorkspaceServices,
} from '../../adapters/index.ts'
import { browserWorkspace } from '../../adapters/browser/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import { s3Workspace } from '../../adapters/s3/index.ts'
import { seed as seedBrowser, uniqueFsName, wipeFs } from '../conformance/browser-fixture.ts'
import { freshPrefix, seed as seedS3, startS3rver, wipe, type S3rverHandle } from '../s3/server.ts'
import { startFakeProvider, type FakeProvider, type FakeStep } from '../llm/fake-provider.ts'

type Protocol = 'openai' | 'anthropic'
const PROTOCOLS: Protocol[] = ['openai', 'anthropic']
const BUCKET = 'isoagent-agent'

let fake: FakeProvider
let s3: S3rverHandle
let client: S3Client
beforeAll(async () => {
  ;[fake, s3] = await Promise.all([startFakeProvider(), startS3rver([BUCKET])])
  client = s3.client()
})
afterAll(async () => {
  await Promise.all([fake?.close(), s3?.close()])
})
beforeEach(() => fake.reset([]))

function model(protocol: Protocol): LanguageModel {
  const options = { baseURL: fake.baseURL, apiKey: 'sk-test', model: 'fake-1', retryDelayMs: 5 }
  return protocol === 'openai' ? openAICompatible(options) : anthropic(options)
}

const FILES = { 'src/a.ts': 'export const x = old()\n', 'README.md': '# demo\n' }

/** A workspace of each kind seeded with FILES, and how to read a file back around the tools. */
const KINDS: Record<
  string,
  () => Promise<{
    workspace: WorkspaceServices
    file(p: string): Promise<string>
    done(): Promise<void>
  }>
> = {
  memory: async () => {
    const workspace = memoryWorkspace(FILES)
    const dec = new TextDecoder()
    return {
      workspace,
      file: async (p) => dec.decode(await workspace.read(p as never)),
      done: async () => {},
    }
  },
  local: async () => {
    const root = mkdtempSync(join(tmpdir(), 'isoagent-agent-'))
    for (const [p, c] of Object.entries(FILES)) {
      mkdirSync(join(root, p, '..'), { recursive: true })
      writeFileSync(join(root, p), c)
    }
    return {
      workspace: localWorkspace(root),
      file: async (p) => readFileSync(join(root, p), 'utf8'),
      done: async () => rmSync(root, { recursive: true, force: true }),
    }
  },
  s3: async () => {
    const prefix = freshPrefix('agent/')
    await seedS3(client, BUCKET, prefix, FILES)
    const workspace = s3Workspace({ bucket: BUCKET, prefix, client })
    const dec = new TextDecoder()
    return {
      workspace,
      file: async (p) => dec.decode(await workspace.read(p as never)),
      done: () => wipe(client, BUCKET, prefix),
    }
  },
  browser: async () => {
    const name = uniqueFsName('isoagent-agent')
    const workspace = browserWorkspace({ name })
    await seedBrowser(workspace, FILES)
    const dec = new TextDecoder()
    return {
      workspace,
      file: async (p) => dec.decode(await workspace.read(p as never)),
      done: () => wipeFs(name),
    }
  },
}

const call = (name: string, args: unknown) => ({ name, arguments: JSON.stringify(args) })
const THREE_STEPS: FakeStep[] = [
  { text: 'Reading first.', toolCalls: [call('read', { file_path: 'src/a.ts' })] },
  {
    toolCalls: [
      call('edit', { file_path: 'src/a.ts', old_string: 'old()', new_string: 'renamed()' }),
    ],
  },
  { toolCalls: [call('search', { mode: 'grep', query: 'renamed' })] },
  { text: 'Renamed old() in src/a.ts.' },
]

/** The tool messages of a recorded request, in either protocol's shape, as text. */
function toolTexts(body: Record<string, unknown>): string[] {
  const messages = body.messages as Record<string, unknown>[]
  const out: string[] = []
  for (const m of messages) {
    if (m.role === 'tool') out.push(String(m.content))
    if (Array.isArray(m.content))
      for (const block of m.content as Record<string, unknown>[])
        if (block.type === 'tool_result')
          out.push(
            typeof block.content === 'string' ? block.content : JSON.stringify(block.content),
          )
  }
  return out
}

const toolNames = (body: Record<string, unknown>) =>
  (body.tools as Record<string, unknown>[]).map((t) =>
    t.type === 'function' ? (t.function as { name: string }).name : (t.name as string),
  )

for (const protocol of PROTOCOLS) {
  describe(`agent loop over the ${protocol} wire protocol`, () => {
    for (const [kind, make] of Object.entries(KINDS)) {
      it(`reads, edits and greps a ${kind} workspace end to end`, async () => {
        const ws = await make()
        try {
          fake.reset([...THREE_STEPS])
          const session = await Agent.create({ model: model(protocol) }).session(ws.workspace)
          const events: AgentEvent[] = []
          for await (const e of session.stream('rename old() to renamed()')) events.push(e)
          expect(events.at(-1)).toMatchObject({
            type: 'finish',
            steps: 4,
            text: 'Renamed old() in src/a.ts.',
            finishReason: 'stop',
          })
          expect(events.filter((e) => e.type === 'text_delta').length).toBeGreaterThan(1)
          const results = events.filter((e) => e.type === 'tool_result')
          expect(results.map((r) => r.type === 'tool_result' && [r.toolName, r.exitCode])).toEqual([
            ['read', 0],
            ['edit', 0],
            ['search', 0],
          ])
          expect(await ws.file('src/a.ts')).toBe('export const x = renamed()\n')
          expect(fake.requests).toHaveLength(4)
          expect(fake.requests.every((r) => r.protocol === protocol)).toBe(true)
          expect(toolNames(fake.requests[0]!.body)).toEqual(session.toolNames())
          expect(toolTexts(fake.requests[1]!.body)[0]).toContain('export const x = old()')
          expect(toolTexts(fake.requests[3]!.body)[2]).toContain('src/a.ts')
          await session.close()
        } finally {
          await ws.done()
        }
      })
    }

    it('gives the model a denied call as an error result', async () => {
      fake.reset([
        { toolCalls: [call('write', { file_path: 'src/a.ts', content: 'gone' })] },
        { text: 'could not write' },
      ])
      const workspace = memoryWorkspace(FILES)
      const session = await Agent.create({ model: model(protocol) }).session(workspace, {
        permissions: { deny: ['write'] },
      })
      const result = await session.send('overwrite it')
      expect(result.text).toBe('could not write')
      expect(toolTexts(fake.requests[1]!.body)[0]).toMatch(/^Error \(permission_denied\)/)
      if (protocol === 'anthropic') {
        const last = (fake.requests[1]!.body.messages as { content: unknown }[]).at(-1)!
        expect(JSON.stringify(last.content)).toContain('"is_error":true')
      }
      expect(await session.readFile('src/a.ts')).toContain('old()')
    })

    it('cancels a slow stream mid-way and settles', async () => {
      fake.reset([
        {
          text: 'a slow answer that takes its time',
          chunks: ['a ', 'slow ', 'answer'],
          delayMs: 300,
        },
      ])
      const session = await Agent.create({ model: model(protocol) }).session(memoryWorkspace())
      const controller = new AbortController()
      let abortedAt = 0
      const seen: string[] = []
      await expect(
        (async () => {
          for await (const e of session.stream('go', { signal: controller.signal })) {
            seen.push(e.type)
            if (e.type === 'text_delta') {
              abortedAt = Date.now()
              controller.abort()
            }
          }
        })(),
      ).rejects.toMatchObject({ code: 'cancelled' })
      expect(seen).toEqual(['step_start', 'text_delta'])
      expect(Date.now() - abortedAt).toBeLessThan(250)
      expect(session.messages()).toEqual([{ role: 'user', content: 'go' }])
      await session.close()
    })

    it('resumes from a snapshot and continues the conversation', async () => {
      fake.reset([
        { toolCalls: [call('read', { file_path: 'README.md' })] },
        { text: 'It is a demo.' },
        { text: 'Still a demo.' },
      ])
      const workspace = memoryWorkspace(FILES)
      const agent = Agent.create({ model: model(protocol) })
      const first = await agent.session(workspace)
      await first.send('what is this?')
      const snapshot = JSON.parse(JSON.stringify(first.snapshot()))
      await first.close()
      const resumed = await agent.resumeSession(snapshot, { workspace })
      expect((await resumed.send('and now?')).text).toBe('Still a demo.')
      const body = JSON.stringify(fake.requests[2]!.body.messages)
      expect(body).toContain('what is this?')
      expect(body).toContain('It is a demo.')
      expect(body).toContain('# demo')
    })

    it('fans a task out to sub-agents over the wire', async () => {
      fake.reset([
        {
          toolCalls: [
            call('task', {
              tasks: [
                { agent: 'explore', description: 'one', prompt: 'look' },
                { agent: 'explore', description: 'two', prompt: 'look' },
              ],
            }),
          ],
        },
        { text: 'child report' },
        { text: 'child report' },
        { text: 'both done' },
      ])
      const session = await Agent.create({ model: model(protocol) }).session(memoryWorkspace(FILES))
      const result = await session.send('delegate')
      expect(result.text).toBe('both done')
      const task = result.steps[0]!.toolResults[0]!
      expect(task).toMatchObject({ toolName: 'task', exitCode: 0 })
      expect(task.output).toContain('=== [1] two · explore (completed, 1 steps) ===')
      const children = fake.requests.slice(1, 3)
      for (const child of children)
        expect(toolNames(child.body)).toEqual(['read', 'ls', 'search', 'web_fetch', 'web_search'])
      const outcome = await session.task({ agent: 'explore', description: 'x', prompt: 'y' })
      // The script is used up: the fake answers 500s, the provider retries, the task fails typed.
      expect(outcome).toMatchObject({ exitCode: 1 })
      expect((outcome.metadata!.results as TaskItemOutcome[])[0]!.errorKind).toBeDefined()
    })
  })
}
