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

const TOKEN = 'workflow-restart-token'
const STEPS = 6
let bundle: WorkerBundle
let dir: string
beforeAll(async () => {
  bundle = await buildWorker()
  dir = mkdtempSync(join(tmpdir(), 'isoagent-wf-do-'))
}, 180_000)
afterAll(() => {
  bundle?.remove()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

// Each step spins a while (workerd's clock stands still while code runs: a loop, not a timer),
// then writes `ran/<step>-<random>.txt`, so a step that ran twice leaves two files.
const SOURCE = `export default async function run(ctx, inputs) {
  if (inputs.kind === 'step') {
    let x = 0
    for (let i = 0; i < 1500000; i++) x += i
    await ctx.tool('write', { file_path: 'ran/' + inputs.step_id + '-' + Math.random().toString(36).slice(2) + '.txt', content: String(x) })
    return inputs.input.n
  }
  const ids = Array.from({ length: ${STEPS} }, (_, i) => 's' + i)
  const missing = ids.filter((id) => !(id in inputs.step_outputs))
  if (missing.length > 0)
    return { type: 'schedule_steps', steps: missing.map((id, i) => ({ step_id: id, step_name: 'spin', input: { n: Number(id.slice(1)) } })) }
  return { type: 'complete', output: ids.map((id) => inputs.step_outputs[id]) }
}`

const start = () =>
  runWorker(
    bundle,
    { ISOAGENT_TOKEN: TOKEN, ISOAGENT_WORKFLOWS: 'object' },
    {
      r2: true,
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

/** Files each step left, read from the R2 bucket beside the Worker (not through it). */
async function ranFiles(w: RunningWorker): Promise<Record<string, number>> {
  const bucket = await w.mf.getR2Bucket('BUCKET')
  const listed = await bucket.list({ prefix: 'ran/' })
  const counts: Record<string, number> = {}
  for (const o of listed.objects) {
    const step = /^ran\/(s\d+)-/.exec(o.key)![1]!
    counts[step] = (counts[step] ?? 0) + 1
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
    // Wait until two steps have written their files, then kill workerd in the middle of the run.
    const deadline = Date.now() + 60_000
    for (;;) {
      const ran = await ranFiles(w)
      if (Object.keys(ran).length >= 2) break
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
    const filesBefore = await ranFiles(w)

    const driven = await api(w, 'POST', `/v1/sessions/${id}/workflows/crash-1/drive`, {
      limits: { maxConcurrentSteps: 1 },
    })
    expect(driven.status).toBe(200)
    expect(driven.json.exitCode, driven.json.output).toBe(0)
    expect(JSON.parse(driven.json.output)).toEqual([0, 1, 2, 3, 4, 5])

    const after = (await api(w, 'GET', `/v1/sessions/${id}/workflows/crash-1/history`))
      .json as JournalEvent[]
    expect(after.map((e) => e.sequence)).toEqual(after.map((_, i) => i + 1))
    expect(after.at(-1)!.type).toBe('run_completed')
    const files = await ranFiles(w)
    const resumed = after.slice(before.length)
    for (const step of completedBefore) {
      // Exactly once: nothing of it after the restart, and one file of it in the bucket.
      expect(resumed.filter((e) => e.step_id === step)).toEqual([])
      expect(files[step], step).toBe(1)
      expect(files[step]).toBe(filesBefore[step])
    }
    for (let i = 0; i < STEPS; i++) {
      const step = `s${i}`
      expect(after.filter((e) => e.type === 'step_completed' && e.step_id === step)).toHaveLength(1)
      // A step in flight at the kill may run again (recovery rule); never more than it started.
      const starts = after.filter((e) => e.type === 'step_started' && e.step_id === step).length
      expect(files[step], step).toBeGreaterThanOrEqual(1)
      expect(files[step], step).toBeLessThanOrEqual(starts)
    }
  } finally {
    await w.close()
  }
}, 240_000)
