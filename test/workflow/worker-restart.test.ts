// Crash and resume on the Worker: a run journaled in its session's Durable Object (SQLite
// storage, persisted in a temp dir) survives workerd being killed mid-run; after a restart of
// Miniflare, a drive over HTTP finishes the run and no step completed before the kill runs again.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import {
  buildWorker,
  runWorker,
  type RunningWorker,
  type WorkerBundle,
} from '../http/worker-bundle.ts'
import { startFakeProvider, type FakeProvider } from '../llm/fake-provider.ts'

const TOKEN = 'workflow-restart-token'
const STEPS = 6
let bundle: WorkerBundle
let dir: string
beforeAll(async () => {
  fake = await startFakeProvider()
  fake.program(
    'wf-crash',
    Array.from({ length: 2 * STEPS }, () => ({ text: 'step done', delayMs: 250 })),
  )
  bundle = await buildWorker()
  dir = mkdtempSync(join(tmpdir(), 'isoagent-wf-do-'))
}, 180_000)
afterAll(async () => {
  await fake?.close()
  bundle?.remove()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

// Each step is a sub-agent task (a model turn on the loopback fake provider, slowed down), so
// the object is idle between answers and can be killed in the middle of a step.
const SOURCE = `export default async function run(ctx, inputs) {
  const ids = Array.from({ length: ${STEPS} }, (_, i) => 's' + i)
  const missing = ids.filter((id) => !(id in inputs.step_outputs))
  if (missing.length > 0)
    return { type: 'schedule_steps', steps: missing.map((id) => ({ step_id: id, step_name: 'task',
      input: { tasks: [{ agent: 'explore', description: 'step ' + id, prompt: 'Do step ' + id + '.' }] } })) }
  return { type: 'complete', output: ids.map((id) => inputs.step_outputs[id].metadata.results[0].text) }
}`

let fake: FakeProvider
const MODEL = 'wf-crash'

const start = () =>
  runWorker(
    bundle,
    {
      ISOAGENT_TOKEN: TOKEN,
      ISOAGENT_WORKFLOWS: 'object',
      MODEL_PROVIDER: 'openai',
      MODEL_BASE_URL: fake.baseURL,
      MODEL_API_KEY: 'sk-test',
      MODEL_NAME: MODEL,
    },
    {
      r2: true,
      sqlite: true,
      extra: { durableObjectsPersist: join(dir, 'do'), r2Persist: join(dir, 'r2') },
    },
  )

async function api(w: RunningWorker, method: string, path: string, body?: unknown) {
  const res = await fetch(w.url + path, {
    method,
    headers: { authorization: `Bearer ${TOKEN}` },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
  const text = await res.text()
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers read in tests
  const json: any = text ? JSON.parse(text) : {}
  return { status: res.status, json }
}

/** How many times the provider was asked for each step (each ask is one run of the step). */
function asks(from = 0): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const r of fake.requests.slice(from)) {
    const step = /Do step (s\d+)\./.exec(JSON.stringify(r.body))?.[1]
    if (step !== undefined) counts[step] = (counts[step] ?? 0) + 1
  }
  return counts
}

interface JournalEvent {
  type: string
  sequence: number
  step_id?: string
}

it('resumes a run after workerd is killed mid-run: completed steps never run again', async () => {
  let w = await start()
  let id: string
  try {
    const created = await api(w, 'POST', '/v1/sessions', {})
    expect(created.status).toBe(201)
    id = created.json.id as string
    const driving = api(w, 'POST', `/v1/sessions/${id}/tools/dynamic_workflow`, {
      args: { source: SOURCE, run_id: 'crash-1', limits: { maxConcurrentSteps: 1 } },
    }).catch((error: unknown) => ({ status: 0, json: { error: String(error) } }))
    // Wait until the third step is being asked, then kill workerd in the middle of the run.
    const deadline = Date.now() + 60_000
    for (;;) {
      if (Object.keys(asks()).length >= 3) break
      if (Date.now() > deadline) throw new Error('the run did not get going')
      await new Promise((r) => setTimeout(r, 50))
    }
    await w.close()
    const cut = await driving
    expect(cut.status, JSON.stringify(cut.json)).toBe(0)
  } catch (error) {
    await w.close().catch(() => undefined)
    throw error
  }

  w = await start()
  try {
    const inspected = await api(w, 'GET', `/v1/sessions/${id}/workflows/crash-1`)
    expect(inspected.status, JSON.stringify(inspected.json)).toBe(200)
    expect(inspected.json).toMatchObject({ status: 'running', running: false })
    const before = (await api(w, 'GET', `/v1/sessions/${id}/workflows/crash-1/history`))
      .json as JournalEvent[]
    const completedBefore = before.filter((e) => e.type === 'step_completed').map((e) => e.step_id!)
    expect(completedBefore.length).toBeGreaterThanOrEqual(1)
    expect(completedBefore.length).toBeLessThan(STEPS)
    const asksBefore = asks()
    const seen = fake.requests.length

    const driven = await api(w, 'POST', `/v1/sessions/${id}/workflows/crash-1/drive`, {
      limits: { maxConcurrentSteps: 1 },
    })
    expect(driven.status).toBe(200)
    expect(driven.json.exitCode, driven.json.output).toBe(0)
    expect(JSON.parse(driven.json.output)).toEqual(Array(STEPS).fill('step done'))

    const after = (await api(w, 'GET', `/v1/sessions/${id}/workflows/crash-1/history`))
      .json as JournalEvent[]
    expect(after.map((e) => e.sequence)).toEqual(after.map((_, i) => i + 1))
    expect(after.at(-1)!.type).toBe('run_completed')
    const total = asks()
    const resumedAsks = asks(seen)
    const resumed = after.slice(before.length)
    for (const step of completedBefore) {
      // Exactly once: nothing of it after the restart, the provider asked for it once in all.
      expect(resumed.filter((e) => e.step_id === step)).toEqual([])
      expect(resumedAsks[step], step).toBeUndefined()
      expect(total[step], step).toBe(1)
      expect(asksBefore[step]).toBe(1)
    }
    for (let i = 0; i < STEPS; i++) {
      const step = `s${i}`
      expect(after.filter((e) => e.type === 'step_completed' && e.step_id === step)).toHaveLength(1)
      // A step in flight at the kill runs again (the recovery rule); never more than it started.
      const starts = after.filter((e) => e.type === 'step_started' && e.step_id === step).length
      expect(total[step], step).toBeGreaterThanOrEqual(1)
      expect(total[step], step).toBeLessThanOrEqual(starts)
    }
  } finally {
    await w.close()
  }
}, 240_000)
