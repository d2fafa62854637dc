// The dynamic_workflow control routes (GET/POST /v1/sessions/:id/workflows/:runId...), written
// against a base URL and fetch only, so the same cases run against the Node server and the
// Worker in workerd (where runs are journaled in the session's Durable Object).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { Api, type CaseServer, type CaseServerConfig } from './http-cases.ts'

const TOKEN = 'workflow-token-0123456789'

/** Facts of the server behind the cases. */
export interface WorkflowCaseFacts {
  /** Whether two sessions share one workspace, and so one file store of runs. */
  sharedWorkspace: boolean
}

// Steps write a file each (`<dir>/ran/<step>-<random>`), so a step that ran twice shows; the
// run waits (wait_until) until `<dir>/go.txt` exists; `spin` makes each step take a while.
const SOURCE = `export default async function run(ctx, inputs) {
  const dir = inputs.input.dir
  if (inputs.kind === 'step') {
    let x = 0
    for (let i = 0; i < inputs.input.spin; i++) x += i
    await ctx.tool('write', { file_path: dir + '/ran/' + inputs.step_id + '-' + Math.random().toString(36).slice(2) + '.txt', content: String(x) })
    return inputs.input.n * 2
  }
  const gate = await ctx.tool('read', { file_path: dir + '/go.txt' })
  if (gate.exitCode !== 0) return { type: 'wait_until', wait_id: 'go', resume_at: '2100-01-01T00:00:00Z' }
  const ids = [1, 2, 3, 4].slice(0, inputs.input.steps)
  const missing = ids.filter((n) => !(('s' + n) in inputs.step_outputs))
  if (missing.length > 0)
    return { type: 'schedule_steps', steps: missing.map((n) => ({ step_id: 's' + n, step_name: 'double', input: { n, dir, spin: inputs.input.spin } })) }
  return { type: 'complete', output: ids.map((n) => inputs.step_outputs['s' + n]) }
}`

interface Json {
  status: number
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers read in tests
  body: any
}

let cases = 0

/** Register the workflow route cases for servers made by `start`. */
export function workflowCases(
  label: string,
  start: (config: CaseServerConfig) => Promise<CaseServer>,
  facts: WorkflowCaseFacts,
): void {
  describe(`workflow routes (${label})`, () => {
    let server: CaseServer
    let api: Api
    beforeAll(async () => {
      server = await start({ token: TOKEN, permissions: { ask: [] }, workflows: true })
      api = new Api(server.baseUrl, TOKEN)
    })
    afterEach(async () => api.closeAll())
    afterAll(async () => server?.close())

    const req = (method: string, path: string, body?: unknown): Promise<Json> =>
      api.json(path, {
        method,
        ...(body === undefined
          ? {}
          : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      })
    const run = (id: string, runId: string, rest = '') =>
      `/v1/sessions/${id}/workflows/${runId}${rest}`
    const expectError = (r: Json, status: number, code: string) => {
      expect(r.status, JSON.stringify(r.body)).toBe(status)
      expect(r.body.error.code).toBe(code)
      expect(typeof r.body.error.message).toBe('string')
    }

    /** A suspended run (its gate closed) in session `id`: its run id and folder. */
    async function suspendedRun(id: string, options: { steps?: number; spin?: number } = {}) {
      const n = ++cases
      const runId = `run-${n}-${Math.random().toString(36).slice(2, 8)}`
      const dir = `wf/${runId}`
      const input = { dir, steps: options.steps ?? 3, spin: options.spin ?? 1 }
      const r = await api.call(id, 'dynamic_workflow', {
        source: SOURCE,
        run_id: runId,
        input,
        limits: { maxConcurrentSteps: 1 },
      })
      expect(r.exitCode, r.output).toBe(1)
      expect(r.errorKind?.type).toBe('unsupported')
      return { runId, dir }
    }
    const open = (id: string, dir: string) =>
      api.call(id, 'write', { file_path: `${dir}/go.txt`, content: 'go\n' })
    async function ranCounts(id: string, dir: string): Promise<Record<string, number>> {
      const ls = await api.call(id, 'ls', { path: `${dir}/ran` })
      const counts: Record<string, number> = {}
      for (const m of ls.output.matchAll(/\b(s\d)-[a-z0-9]+\.txt/g))
        counts[m[1]!] = (counts[m[1]!] ?? 0) + 1
      return counts
    }

    it('inspects, drives and reads the history of a run; an ended run cannot be cancelled', async () => {
      const id = await api.session()
      const { runId, dir } = await suspendedRun(id)
      const idle = await req('GET', run(id, runId))
      expect(idle.status).toBe(200)
      expect(idle.body).toMatchObject({
        run_id: runId,
        status: 'running',
        running: false,
        last_sequence: 1,
        steps: { total: 0, pending: 0, completed: 0, failed: 0 },
      })
      expect(idle.body.source_hash).toMatch(/^[0-9a-f]{64}$/)
      const first = await req('GET', run(id, runId, '/history'))
      expect(first.status).toBe(200)
      expect(first.body.map((e: { type: string }) => e.type)).toEqual(['run_created'])

      await open(id, dir)
      const events = await api.events(id)
      const driven = await req('POST', run(id, runId, '/drive'), {})
      expect(driven.status).toBe(200)
      expect(driven.body.exitCode, driven.body.output).toBe(0)
      expect(JSON.parse(driven.body.output)).toEqual([2, 4, 6])
      expect(driven.body.metadata.dynamic_workflow).toMatchObject({
        run_id: runId,
        status: 'completed',
      })
      // Each step's start and completion reached the session's event stream.
      let completed = 0
      const frames = await events.collect(
        (f) => f.event === 'workflow_step_completed' && ++completed === 3,
      )
      await events.close()
      const steps = frames
        .filter((f) => f.event.startsWith('workflow_step_'))
        .map((f) => JSON.parse(f.data) as { type: string; run_id: string; step_id: string })
      expect(steps.filter((e) => e.type === 'workflow_step_started')).toHaveLength(3)
      expect(new Set(steps.map((e) => e.run_id))).toEqual(new Set([runId]))
      const done = await req('GET', run(id, runId))
      expect(done.body).toMatchObject({
        status: 'completed',
        running: false,
        steps: { total: 3, completed: 3, pending: 0 },
      })
      const history = (await req('GET', run(id, runId, '/history'))).body as {
        type: string
        sequence: number
      }[]
      expect(history.map((e) => e.sequence)).toEqual(history.map((_, i) => i + 1))
      expect(history.at(-1)!.type).toBe('run_completed')
      expect(history.filter((e) => e.type === 'step_completed')).toHaveLength(3)
      expect(done.body.last_sequence).toBe(history.length)

      // Driving a finished run again answers its result and runs nothing.
      const again = await req('POST', run(id, runId, '/drive'))
      expect(again.status).toBe(200)
      expect(again.body.exitCode).toBe(0)
      expect(await ranCounts(id, dir)).toEqual({ s1: 1, s2: 1, s3: 1 })
      expectError(await req('POST', run(id, runId, '/cancel'), {}), 409, 'workflow_ended')
    })

    it('cancels an idle run at once, journaling the reason', async () => {
      const id = await api.session()
      const { runId } = await suspendedRun(id)
      const cancelled = await req('POST', run(id, runId, '/cancel'), { reason: 'not needed' })
      expect(cancelled.status).toBe(200)
      expect(cancelled.body).toEqual({ run_id: runId, cancelled: true, running: false })
      expect((await req('GET', run(id, runId))).body.status).toBe('cancelled')
      const history = (await req('GET', run(id, runId, '/history'))).body
      expect(history.at(-1)).toMatchObject({ type: 'run_cancelled', reason: 'not needed' })
      const drive = await req('POST', run(id, runId, '/drive'))
      expect(drive.status).toBe(200)
      expect(drive.body.exitCode).toBe(1)
      expect(drive.body.errorKind.type).toBe('cancelled')
    })

    // On the Worker the scripts run on the session object's own thread: the drive yields to the
    // event loop before each one, so the cancel reaches the object while the drive runs.
    it('cancels a run while it is being driven: its steps settle, then run_cancelled, and no step runs after', async () => {
      const id = await api.session()
      const { runId, dir } = await suspendedRun(id, { steps: 4, spin: 3_000_000 })
      await open(id, dir)
      const driving = req('POST', run(id, runId, '/drive'))
      let seen: Json | undefined
      for (let i = 0; i < 500; i++) {
        seen = await req('GET', run(id, runId))
        if (seen.body.running) break
        await new Promise((r) => setTimeout(r, 10))
      }
      expect(seen?.body.running).toBe(true)
      const cancelled = await req('POST', run(id, runId, '/cancel'), { reason: 'stop now' })
      const cancelledAt = Date.now()
      expect(cancelled.status).toBe(200)
      expect(cancelled.body).toMatchObject({ cancelled: true, running: true })
      const result = await driving
      expect(Date.now() - cancelledAt).toBeLessThan(15_000)
      expect(result.status).toBe(200)
      expect(result.body.exitCode).toBe(1)
      expect(result.body.errorKind.type).toBe('cancelled')
      const after = await req('GET', run(id, runId))
      expect(after.body).toMatchObject({ status: 'cancelled', running: false })
      expect(after.body.steps.completed).toBeLessThan(4)
      const history = (await req('GET', run(id, runId, '/history'))).body as { type: string }[]
      expect(history.at(-1)).toMatchObject({ type: 'run_cancelled', reason: 'stop now' })
      // A step that passed its start check before the cancel journals its start after it (the
      // journal's appends are serialised), so the history read at the cancel cannot bound the
      // starts; what holds is that every event of a step comes before run_cancelled.
      expect(history.findIndex((e) => e.type === 'run_cancelled')).toBe(history.length - 1)
      // No step runs after the drive ended: the steps' files stay as they are.
      const ran = await ranCounts(id, dir)
      await new Promise((r) => setTimeout(r, 500))
      expect(await ranCounts(id, dir)).toEqual(ran)
    }, 60_000)

    it('lets one of two concurrent drivers of a run drive it; every step runs once', async () => {
      const id = await api.session()
      const { runId, dir } = await suspendedRun(id, { steps: 4, spin: 500_000 })
      await open(id, dir)
      const both = await Promise.all([
        req('POST', run(id, runId, '/drive')),
        req('POST', run(id, runId, '/drive')),
      ])
      // The loser is refused (409 while the run is driven), or, had the winner already finished,
      // answered the finished run; never a 5xx, never a second run of a step.
      for (const r of both) {
        expect([200, 409], JSON.stringify(r.body)).toContain(r.status)
        if (r.status === 409) expect(r.body.error.code).toBe('workflow_running')
      }
      const winners = both.filter((r) => r.status === 200 && r.body.exitCode === 0)
      expect(winners.length).toBeGreaterThanOrEqual(1)
      for (const w of winners) expect(JSON.parse(w.body.output)).toEqual([2, 4, 6, 8])
      expect(await ranCounts(id, dir)).toEqual({ s1: 1, s2: 1, s3: 1, s4: 1 })
    }, 60_000)

    if (facts.sharedWorkspace)
      it('two sessions over one workspace drive one run at once: no completed step runs again', async () => {
        const a = await api.session()
        const b = await api.session()
        const { runId, dir } = await suspendedRun(a, { steps: 4, spin: 200_000 })
        await open(a, dir)
        const both = await Promise.all([
          req('POST', run(a, runId, '/drive')),
          req('POST', run(b, runId, '/drive')),
        ])
        for (const r of both) expect(r.status, JSON.stringify(r.body)).toBe(200)
        // A loser stops at its first stale append (a typed failure); drive again to finish.
        const final = await req('POST', run(a, runId, '/drive'))
        expect(final.body.exitCode, final.body.output).toBe(0)
        expect(JSON.parse(final.body.output)).toEqual([2, 4, 6, 8])
        // Each step completed once; every run of a step is a journaled start (a step the other
        // driver had in flight may be started again, as after a crash; a completed one never).
        const history = (await req('GET', run(a, runId, '/history'))).body as {
          type: string
          step_id?: string
        }[]
        const ran = await ranCounts(a, dir)
        for (const step of ['s1', 's2', 's3', 's4']) {
          const of = (type: string) =>
            history.filter((e) => e.type === type && e.step_id === step).length
          expect(of('step_completed'), step).toBe(1)
          expect(ran[step], step).toBe(of('step_started'))
        }
        expect((await req('GET', run(b, runId))).body.status).toBe('completed')
      })

    it('documents the four routes in the OpenAPI document', async () => {
      const doc = (await req('GET', '/v1/openapi.json')).body as {
        paths: Record<string, Record<string, { operationId: string }>>
      }
      const base = '/v1/sessions/{id}/workflows/{runId}'
      expect(doc.paths[base]?.get?.operationId).toBe('inspectWorkflow')
      expect(doc.paths[`${base}/history`]?.get?.operationId).toBe('workflowHistory')
      expect(doc.paths[`${base}/cancel`]?.post?.operationId).toBe('cancelWorkflow')
      expect(doc.paths[`${base}/drive`]?.post?.operationId).toBe('driveWorkflow')
    })

    it('answers 404 for an unknown session or run, 400 for a bad run id or body', async () => {
      const id = await api.session()
      expectError(await req('GET', run('no-such-session', 'r')), 404, 'session_not_found')
      for (const [method, rest] of [
        ['GET', ''],
        ['GET', '/history'],
        ['POST', '/cancel'],
        ['POST', '/drive'],
      ] as const)
        expectError(await req(method, run(id, 'never-created', rest)), 404, 'workflow_not_found')
      expectError(await req('GET', run(id, 'a.b')), 400, 'invalid_argument')
      expectError(await req('GET', run(id, 'x'.repeat(129))), 400, 'invalid_argument')
      const { runId } = await suspendedRun(id)
      expectError(await req('POST', run(id, runId, '/drive'), '{"limits":'), 400, 'invalid_json')
      expectError(await req('POST', run(id, runId, '/drive'), '[1]'), 400, 'invalid_argument')
      expectError(
        await req('POST', run(id, runId, '/drive'), { source: 'x' }),
        400,
        'invalid_argument',
      )
      expectError(
        await req('POST', run(id, runId, '/drive'), { limits: 3 }),
        400,
        'invalid_argument',
      )
      expectError(
        await req('POST', run(id, runId, '/cancel'), { reason: 5 }),
        400,
        'invalid_argument',
      )
      expectError(
        await req('POST', run(id, runId, '/cancel'), { why: 'x' }),
        400,
        'invalid_argument',
      )
      // Bad limits reach the tool, which refuses them typed (the run is untouched).
      const bad = await req('POST', run(id, runId, '/drive'), {
        limits: { maxConcurrentSteps: 99 },
      })
      expect(bad.status).toBe(200)
      expect(bad.body.exitCode).toBe(1)
      expect(bad.body.errorKind.type).toBe('invalid_argument')
      expect((await req('GET', run(id, runId))).body.status).toBe('running')
      expectError(await req('DELETE', run(id, runId)), 405, 'method_not_allowed')
    })

    it('types hostile workflows: oversized input, unknown command, a cycle, deep input', async () => {
      const id = await api.session()
      const big = await api.call(id, 'dynamic_workflow', {
        source: SOURCE,
        input: { blob: 'x'.repeat(200 * 1024) },
      })
      expect(big).toMatchObject({ exitCode: 1, errorKind: { type: 'invalid_argument' } })
      expect(big.output).toMatch(/at most 131072/)
      const bigSource = await api.call(id, 'dynamic_workflow', {
        source: `// ${'x'.repeat(300 * 1024)}\nexport default async function run() {}`,
      })
      expect(bigSource).toMatchObject({ exitCode: 1, errorKind: { type: 'invalid_argument' } })
      const huge = await api.fetch(`/v1/sessions/${id}/workflows/r1/drive`, {
        method: 'POST',
        body: JSON.stringify({ limits: { pad: 'x'.repeat(9 * 1024 * 1024) } }),
      })
      expect(huge.status).toBe(413)
      expect(((await huge.json()) as { error: { code: string } }).error.code).toBe(
        'payload_too_large',
      )
      const badKind = await api.call(id, 'dynamic_workflow', {
        source: `export default async function run() { return { type: 'schedule_step', step_id: 'a', step_name: 42, input: {} } }`,
      })
      expect(badKind).toMatchObject({ exitCode: 1, errorKind: { type: 'invalid_argument' } })
      expect(badKind.output).toMatch(/invalid command/)
      const unknown = await api.call(id, 'dynamic_workflow', {
        source: `export default async function run() { return { type: 'fork', steps: [] } }`,
      })
      expect(unknown).toMatchObject({ exitCode: 1, errorKind: { type: 'invalid_argument' } })
      expect(unknown.output).toMatch(/invalid command/)
      // A script that schedules the same step again and again: no progress, the run fails.
      const cycle = await api.call(id, 'dynamic_workflow', {
        source: `export default async function run(ctx, inputs) {
          if (inputs.kind === 'step') return 1
          return { type: 'schedule_step', step_id: 'loop', step_name: 'again', input: {} }
        }`,
      })
      expect(cycle).toMatchObject({ exitCode: 1, errorKind: { type: 'invalid_argument' } })
      expect(cycle.output).toMatch(/no progress/)
      // A step whose input nests 2,000 deep, and a step that recurses without end.
      let deep: unknown = 0
      for (let i = 0; i < 2000; i++) deep = [deep]
      const nested = await api.call(id, 'dynamic_workflow', {
        source: `export default async function run(ctx, inputs) {
          if (inputs.kind === 'step') { const f = (n) => f(n + 1) + 1; return f(0) }
          if ('d' in inputs.step_failures) return { type: 'fail', error: inputs.step_failures.d.error }
          return { type: 'schedule_step', step_id: 'd', step_name: 'deep', input: { deep: inputs.input.deep },
            retry: { max_attempts: 1, on_exhausted: 'continue_workflow' } }
        }`,
        input: { deep },
      })
      expect(nested.exitCode).toBe(1)
      expect(nested.errorKind?.type).toBe('invalid_argument')
      expect((await req('GET', '/v1/health')).status).toBe(200)
    })
  })
}
