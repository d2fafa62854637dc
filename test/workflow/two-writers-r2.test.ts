// Two writers of one workspace workflow store on R2 (Miniflare's workerd, which enforces `onlyIf`
// etag conditions): two stores appending to one run's journal at once, two sessions starting or
// resuming one run at once, and a writer stopped in the middle of an append. Each store and each
// session has its own workspace object over the same prefix, as two Workers would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  Agent,
  IsoagentError,
  workspaceWorkflowStore,
  type WorkflowEvent,
  type WorkflowStore,
} from '../../adapters/index.ts'
import { r2Workspace, type R2BucketLike } from '../../adapters/r2/index.ts'
import * as r2raw from '../r2/miniflare-r2.ts'
import { stepWriterSource } from './step-writer-source.ts'

let r2: r2raw.LocalR2
beforeAll(async () => {
  r2 = await r2raw.startLocalR2()
}, 60_000)
afterAll(async () => r2?.close())

const decoder = new TextDecoder()
const journalKey = (prefix: string, run: string) => `${prefix}.a3s/workflow/${run}.jsonl`

/** The journal object's lines, each parsed (throws on a line that is not whole JSON). */
async function rawJournal(prefix: string, run: string): Promise<WorkflowEvent[]> {
  const bytes = await r2raw.rawBytes(r2.bucket, journalKey(prefix, run))
  if (bytes === undefined) return []
  const text = decoder.decode(bytes)
  expect(text.endsWith('\n')).toBe(true)
  return text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as WorkflowEvent)
}

function expectContiguous(history: readonly WorkflowEvent[]): void {
  expect(history.map((e) => e.sequence)).toEqual(history.map((_, i) => i + 1))
}

/**
 * `bucket` whose puts wait a few milliseconds before they go: the gap between a writer's version
 * check and its put widens, as between two Workers far apart, so only R2's own condition on the
 * put keeps two writers apart.
 */
function slowPuts(bucket: R2BucketLike): R2BucketLike {
  return {
    head: (k) => bucket.head(k),
    get: (k, o) => bucket.get(k, o),
    list: (o) => bucket.list(o),
    delete: (k) => bucket.delete(k),
    put: async (k, v, o) => {
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20))
      return bucket.put(k, v, o)
    },
  }
}

const isConflict = (error: unknown) => IsoagentError.is(error) && error.code === 'version_conflict'

/**
 * Append `events` one call each, after the last sequence this writer knows; on a
 * `version_conflict` read the journal again and retry. Any other failure is thrown.
 */
async function appendAll(
  store: WorkflowStore,
  run: string,
  events: readonly { step_id: string }[],
  batch: number,
): Promise<{ conflicts: number }> {
  let conflicts = 0
  let last = (await store.history(run)).at(-1)?.sequence ?? 0
  for (let i = 0; i < events.length; i += batch) {
    const slice = events
      .slice(i, i + batch)
      .map((e) => ({ type: 'step_started' as const, step_id: e.step_id, attempt: 1 }))
    for (;;) {
      await new Promise((r) => setTimeout(r, Math.random() * 8))
      try {
        last = (await store.append(run, last, slice)).at(-1)!.sequence
        break
      } catch (error) {
        if (!isConflict(error)) throw error
        conflicts++
        last = (await store.history(run)).at(-1)?.sequence ?? 0
      }
    }
  }
  return { conflicts }
}

describe('two stores appending to one run on R2', () => {
  for (const batch of [1, 3])
    it(`loses no event and keeps the journal whole (${batch} event(s) an append)`, async () => {
      const prefix = r2raw.freshPrefix('wf2/')
      const run = `race-${batch}`
      const a = workspaceWorkflowStore(r2Workspace(slowPuts(r2.bucket), { prefix }))
      const b = workspaceWorkflowStore(r2Workspace(slowPuts(r2.bucket), { prefix }))
      await a.append(run, 0, [{ type: 'run_created', run_id: run, source_hash: 'h', input: {} }])
      await b.history(run)
      const ids = (w: string) => Array.from({ length: 12 }, (_, i) => ({ step_id: `${w}${i}` }))
      const [ra, rb] = await Promise.all([
        appendAll(a, run, ids('a'), batch),
        appendAll(b, run, ids('b'), batch),
      ])
      // The writers met: some appends were refused as stale, and retried.
      expect(ra.conflicts + rb.conflicts).toBeGreaterThan(0)
      for (const store of [a, b, workspaceWorkflowStore(r2Workspace(r2.bucket, { prefix }))]) {
        const history = await store.history(run)
        expect(history).toHaveLength(25)
        expectContiguous(history)
        const started = history.flatMap((e) => (e.type === 'step_started' ? [e.step_id] : []))
        expect(started.sort()).toEqual([...ids('a'), ...ids('b')].map((e) => e.step_id).sort())
        expect(await rawJournal(prefix, run)).toEqual(history)
      }
    }, 60_000)

  it('refuses a stale append with a typed version_conflict, from a cached or a fresh view', async () => {
    const prefix = r2raw.freshPrefix('wf2/')
    const run = 'stale'
    const a = workspaceWorkflowStore(r2Workspace(r2.bucket, { prefix }))
    const b = workspaceWorkflowStore(r2Workspace(r2.bucket, { prefix }))
    const created = { type: 'run_created' as const, run_id: run, source_hash: 'h', input: {} }
    // Both create the run at once: one lands, the other is a conflict.
    const made = await Promise.allSettled([
      a.append(run, 0, [created]),
      b.append(run, 0, [created]),
    ])
    expect(made.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    const refused = made.find((r) => r.status === 'rejected')
    expect(isConflict(refused?.reason)).toBe(true)
    // Each has the journal cached at sequence 1; a lands sequence 2, b's append after 1 is stale.
    await b.history(run)
    await a.append(run, 1, [{ type: 'step_started', step_id: 's', attempt: 1 }])
    const stale = await b.append(run, 1, [{ type: 'step_started', step_id: 't', attempt: 1 }]).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(stale).toMatchObject({ code: 'version_conflict', data: { expected: 1, actual: 2 } })
    const history = await b.history(run)
    expect(history.map((e) => e.type)).toEqual(['run_created', 'step_started'])
    expect(await rawJournal(prefix, run)).toEqual(history)
  }, 60_000)
})

// After two steps the run waits until `go.txt` exists, then does two more.
const SOURCE = stepWriterSource([1, 2], [3, 4])

/** How often each step's file was written under `prefix`. */
async function ranCounts(prefix: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const key of await r2raw.rawKeys(r2.bucket, `${prefix}ran/`)) {
    const step = /ran\/(s\d)-/.exec(key)?.[1]
    if (step !== undefined) counts[step] = (counts[step] ?? 0) + 1
  }
  return counts
}

describe('two sessions on one run on R2', () => {
  it('starting one run id at once: one drives it, the other gets a typed conflict', async () => {
    const prefix = r2raw.freshPrefix('wf2/')
    const run = 'start-race'
    const agent = Agent.create()
    const sessions = await Promise.all(
      [0, 1].map(() =>
        agent.session(r2Workspace(slowPuts(r2.bucket), { prefix }), { workflows: {} }),
      ),
    )
    try {
      await sessions[0]!.tool('write', { file_path: 'go.txt', content: 'go\n' })
      const results = await Promise.all(
        sessions.map((s) => s.tool('dynamic_workflow', { source: SOURCE, run_id: run })),
      )
      const won = results.filter((r) => r.exitCode === 0)
      const lost = results.filter((r) => r.exitCode !== 0)
      expect(won, results.map((r) => r.output).join('\n')).toHaveLength(1)
      expect(JSON.parse(won[0]!.output)).toEqual([2, 4, 6, 8])
      expect(lost[0]!.errorKind, lost[0]!.output).toMatchObject({ type: 'version_conflict' })
      expect(await ranCounts(prefix)).toEqual({ s1: 1, s2: 1, s3: 1, s4: 1 })
      const history = await sessions[1]!.workflow(run).history()
      expectContiguous(history)
      expect(history.at(-1)).toMatchObject({ type: 'run_completed', output: [2, 4, 6, 8] })
      expect(await rawJournal(prefix, run)).toEqual(history)
    } finally {
      await Promise.all(sessions.map((s) => s.close()))
    }
  }, 60_000)

  it('resuming one suspended run at once: one finishes it, the other gets a typed conflict', async () => {
    const prefix = r2raw.freshPrefix('wf2/')
    const run = 'resume-race'
    const agent = Agent.create()
    const first = await agent.session(r2Workspace(r2.bucket, { prefix }), { workflows: {} })
    const suspended = await first.tool('dynamic_workflow', { source: SOURCE, run_id: run })
    expect(suspended.errorKind?.type, suspended.output).toBe('unsupported')
    await first.tool('write', { file_path: 'go.txt', content: 'go\n' })
    await first.close()
    const sessions = await Promise.all(
      [0, 1].map(() =>
        agent.session(r2Workspace(slowPuts(r2.bucket), { prefix }), { workflows: {} }),
      ),
    )
    try {
      const results = await Promise.all(sessions.map((s) => s.workflow(run).drive()))
      const won = results.filter((r) => r.exitCode === 0)
      const lost = results.filter((r) => r.exitCode !== 0)
      expect(won, results.map((r) => r.output).join('\n')).toHaveLength(1)
      expect(JSON.parse(won[0]!.output)).toEqual([2, 4, 6, 8])
      expect(lost[0]!.errorKind, lost[0]!.output).toMatchObject({ type: 'version_conflict' })
      expect(await ranCounts(prefix)).toEqual({ s1: 1, s2: 1, s3: 1, s4: 1 })
      const history = await sessions[0]!.workflow(run).history()
      expectContiguous(history)
      expect(history.at(-1)).toMatchObject({ type: 'run_completed' })
      expect(await rawJournal(prefix, run)).toEqual(history)
    } finally {
      await Promise.all(sessions.map((s) => s.close()))
    }
  }, 60_000)
})

/** Two steps at once, then the run completes. */
const PAIR = stepWriterSource([1, 2])

/**
 * `bucket` where the first put of the journal that holds `s1`'s completion is cut off, as a
 * request killed on the way: `before` it reaches R2, or `after` (it lands, its answer is lost);
 * and where the put of `s2`'s file takes `slowMs`, so `s2` is still running then.
 */
function cutOff(bucket: R2BucketLike, when: 'before' | 'after', slowMs: number): R2BucketLike {
  let cut = false
  return {
    ...slowPuts(bucket),
    put: async (k, v, o) => {
      if (k.includes('/ran/s2-')) await new Promise((r) => setTimeout(r, slowMs))
      const completes = /"step_completed","step_id":"s1"/.test(decoder.decode(v))
      if (k.endsWith('.jsonl') && completes && !cut) {
        cut = true
        if (when === 'after') await bucket.put(k, v, o)
        throw new Error('network connection lost')
      }
      return bucket.put(k, v, o)
    },
  }
}

describe('a journal write cut off in the middle, on R2', () => {
  for (const when of ['before', 'after'] as const)
    it(`(${when} it lands) ends the drive whole; the next reader folds and finishes the run`, async () => {
      const prefix = r2raw.freshPrefix('wf2/')
      const run = `cut-${when}`
      const agent = Agent.create()
      const session = await agent.session(r2Workspace(cutOff(r2.bucket, when, 400), { prefix }), {
        workflows: {},
      })
      const failed = await session.tool('dynamic_workflow', {
        source: PAIR,
        run_id: run,
        limits: { maxConcurrentSteps: 2 },
      })
      expect(failed.exitCode, failed.output).toBe(1)
      expect(failed.errorKind?.type, failed.output).toBe('transport')
      await expect(session.workflow(run).inspect()).resolves.toMatchObject({ running: false })
      // The drive has ended with its call: nothing more is journaled after it returned.
      const atReturn = await rawJournal(prefix, run)
      await new Promise((r) => setTimeout(r, 800))
      expect(await rawJournal(prefix, run)).toEqual(atReturn)
      const s1 = atReturn.filter((e) => e.type === 'step_completed' && e.step_id === 's1')
      expect(s1).toHaveLength(when === 'after' ? 1 : 0)

      // Another session folds the journal and finishes the run, s1 done once in the journal.
      const next = await agent.session(r2Workspace(r2.bucket, { prefix }), { workflows: {} })
      try {
        expect(await next.workflow(run).inspect()).toMatchObject({ status: 'running' })
        const driven = await next.workflow(run).drive()
        expect(driven.exitCode, driven.output).toBe(0)
        expect(JSON.parse(driven.output)).toEqual([2, 4])
        const history = await next.workflow(run).history()
        expectContiguous(history)
        for (const step of ['s1', 's2'])
          expect(
            history.filter((e) => e.type === 'step_completed' && e.step_id === step),
          ).toHaveLength(1)
        expect(await rawJournal(prefix, run)).toEqual(history)
        // A completion that landed is not run again.
        if (when === 'after') expect((await ranCounts(prefix)).s1).toBe(1)
      } finally {
        await next.close()
        await session.close()
      }
    }, 60_000)
})

describe("a writer's signal aborted in the middle of an append, on R2", () => {
  it('journals the run cancelled after the append in flight; the journal folds', async () => {
    const prefix = r2raw.freshPrefix('wf2/')
    const run = 'abort-mid-append'
    // The put of s1's completion is held until the call's signal has aborted.
    const call = new AbortController()
    let held: (() => void) | undefined
    const bucket: R2BucketLike = {
      ...slowPuts(r2.bucket),
      put: async (k, v, o) => {
        const completes = /"step_completed","step_id":"s1"/.test(decoder.decode(v))
        if (k.endsWith('.jsonl') && completes && held === undefined)
          await new Promise<void>((r) => (held = r))
        return r2.bucket.put(k, v, o)
      },
    }
    const agent = Agent.create()
    const session = await agent.session(r2Workspace(bucket, { prefix }), { workflows: {} })
    try {
      const pending = session.tool(
        'dynamic_workflow',
        { source: PAIR, run_id: run, limits: { maxConcurrentSteps: 1 } },
        { signal: call.signal },
      )
      await expect.poll(() => held, { timeout: 20_000 }).toBeDefined()
      call.abort('stopped by the host')
      await new Promise((r) => setTimeout(r, 100))
      held!()
      const result = await pending
      expect(result.errorKind?.type, result.output).toBe('cancelled')
      const atReturn = await rawJournal(prefix, run)
      await new Promise((r) => setTimeout(r, 500))
      expect(await rawJournal(prefix, run)).toEqual(atReturn)
      expectContiguous(atReturn)
      const next = workspaceWorkflowStore(r2Workspace(r2.bucket, { prefix }))
      expect(await next.history(run)).toEqual(atReturn)
      expect(atReturn.map((e) => e.type)).toEqual([
        'run_created',
        'step_scheduled',
        'step_scheduled',
        'step_started',
        'step_completed',
        'run_cancelled',
      ])
      expect(await session.workflow(run).inspect()).toMatchObject({
        status: 'cancelled',
        running: false,
      })
    } finally {
      await session.close()
    }
  }, 60_000)
})
