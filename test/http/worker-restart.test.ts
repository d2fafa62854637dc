// A session's Durable Object loses its memory (eviction, a restart of workerd): the session
// resumes from the snapshot its object stored, over the same R2 bucket.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildWorker, runWorker, type RunningWorker, type WorkerBundle } from './worker-bundle.ts'

const TOKEN = 'restart-token'
let bundle: WorkerBundle
const dirs: string[] = []
afterAll(() => {
  bundle?.remove()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
beforeAll(async () => {
  bundle = await buildWorker()
}, 180_000)

const persisted = () => {
  const dir = mkdtempSync(join(tmpdir(), 'isoagent-do-'))
  dirs.push(dir)
  return { durableObjectsPersist: join(dir, 'do'), r2Persist: join(dir, 'r2') }
}
const start = (persist: ReturnType<typeof persisted>, r2: boolean) =>
  runWorker(bundle, { ISOAGENT_TOKEN: TOKEN }, { r2, extra: persist })

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

describe('Worker sessions outlive their object’s memory', () => {
  it('resumes an R2 session after workerd restarts: files, budget and event numbers go on', async () => {
    const persist = persisted()
    let w = await start(persist, true)
    let id: string
    try {
      const created = await api(w, 'POST', '/v1/sessions', {})
      expect(created.status).toBe(201)
      id = created.json.id as string
      const wrote = await api(w, 'POST', `/v1/sessions/${id}/tools/write`, {
        args: { file_path: 'kept.txt', content: 'still here\n' },
      })
      expect(wrote.json.exitCode).toBe(0)
    } finally {
      await w.close()
    }
    w = await start(persist, true)
    try {
      const info = await api(w, 'GET', `/v1/sessions/${id}`)
      expect(info.status).toBe(200)
      expect(info.json.tools).toContain('read')
      const read = await api(w, 'POST', `/v1/sessions/${id}/tools/read`, {
        args: { file_path: 'kept.txt' },
      })
      expect(read.json.output).toContain('still here')
      const snapshot = await api(w, 'GET', `/v1/sessions/${id}/snapshot`)
      expect(snapshot.json.budget.used.tool_calls).toBeGreaterThanOrEqual(2)
      const res = await fetch(`${w.url}/v1/sessions/${id}/events`, {
        headers: { authorization: `Bearer ${TOKEN}`, 'last-event-id': '1' },
      })
      const reader = res.body!.getReader()
      let text = ''
      while (!text.includes('events_dropped')) {
        const { value, done } = await reader.read()
        if (done) break
        text += new TextDecoder().decode(value)
      }
      await reader.cancel()
      expect(text).toMatch(/event: events_dropped\ndata: \{"type":"events_dropped","count":\d+/)
      expect((await api(w, 'DELETE', `/v1/sessions/${id}`)).status).toBe(204)
      expect((await api(w, 'GET', `/v1/sessions/${id}`)).status).toBe(404)
    } finally {
      await w.close()
    }
    w = await start(persist, true)
    try {
      expect((await api(w, 'GET', `/v1/sessions/${id}`)).status).toBe(404)
    } finally {
      await w.close()
    }
  }, 120_000)

  it('answers 404 for a memory-workspace session after a restart (its files are gone)', async () => {
    const persist = persisted()
    let w = await start(persist, false)
    let id: string
    try {
      const created = await api(w, 'POST', '/v1/sessions', {})
      id = created.json.id as string
      expect(created.status).toBe(201)
    } finally {
      await w.close()
    }
    w = await start(persist, false)
    try {
      const info = await api(w, 'GET', `/v1/sessions/${id}`)
      expect(info.status).toBe(404)
      expect(info.json.error.code).toBe('session_not_found')
    } finally {
      await w.close()
    }
  }, 120_000)
})
