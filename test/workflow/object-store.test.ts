// The workspace workflow store (`.a3s/workflow/<run_id>.jsonl`) on object storage: S3 (s3rver)
// and R2 (Miniflare's workerd). A run does three steps and suspends on a gate; its session is
// closed and resumed from its snapshot over a new workspace object; the drive after it finishes
// the run without running a completed step again. The journal object is rewritten whole under a
// precondition on every append (neither store appends in place); a torn last line, as a crash
// on a disk leaves it, is ignored and dropped.
import type { S3Client } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, type Session, type WorkspaceServices } from '../../adapters/index.ts'
import { r2Workspace } from '../../adapters/r2/index.ts'
import { s3Workspace } from '../../adapters/s3/index.ts'
import * as r2raw from '../r2/miniflare-r2.ts'
import * as s3raw from '../s3/server.ts'
import { stepWriterSource } from './step-writer-source.ts'

// After three steps the run waits until `go.txt` exists, then does two more.
const SOURCE = stepWriterSource([1, 2, 3], [4, 5])

const RUN = 'object-run'
const JOURNAL = `.a3s/workflow/${RUN}.jsonl`

/** One object store under test: a fresh workspace over the same prefix, and raw access to it. */
interface Backend {
  workspace(): WorkspaceServices
  raw(path: string): Promise<string | undefined>
  put(path: string, text: string): Promise<void>
}

async function ranCounts(session: Session): Promise<Record<string, number>> {
  const ls = await session.tool('ls', { path: 'ran' })
  const counts: Record<string, number> = {}
  for (const m of ls.output.matchAll(/\b(s\d)-[a-z0-9]+\.txt/g))
    counts[m[1]!] = (counts[m[1]!] ?? 0) + 1
  return counts
}

/**
 * The object at `path` once two reads a moment apart agree: s3rver writes an object's file in
 * place, so a read that meets a PUT still being written (a retried one, on a loaded machine) sees
 * part of it; S3 and R2 themselves replace an object whole.
 */
async function settledObject(backend: Backend, path: string): Promise<string> {
  let last = await backend.raw(path)
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 100))
    const now = await backend.raw(path)
    if (now !== undefined && now === last) return now
    last = now
  }
  throw new Error(`${path} did not settle`)
}

async function suspendAndResume(backend: Backend): Promise<void> {
  const agent = Agent.create()
  const first = await agent.session(backend.workspace(), { workflows: {} })
  const suspended = await first.tool('dynamic_workflow', {
    source: SOURCE,
    run_id: RUN,
    limits: { maxConcurrentSteps: 2 },
  })
  expect(suspended.exitCode, suspended.output).toBe(1)
  expect(suspended.errorKind?.type).toBe('unsupported')
  expect(await ranCounts(first)).toEqual({ s1: 1, s2: 1, s3: 1 })
  const snapshot = first.snapshot()
  await first.close()

  // The journal object holds whole lines; a torn last one is planted, as a crash leaves it.
  const journal = await settledObject(backend, JOURNAL)
  expect(journal.endsWith('\n')).toBe(true)
  const lines = journal.trimEnd().split('\n')
  expect(lines.filter((l) => l.includes('"step_completed"'))).toHaveLength(3)
  await backend.put(JOURNAL, journal + '{"type":"run_completed","outp')

  const second = await agent.resumeSession(snapshot, {
    workspace: backend.workspace(),
    workflows: {},
  })
  try {
    const handle = second.workflow(RUN)
    const inspected = await handle.inspect()
    expect(inspected).toMatchObject({
      status: 'running',
      running: false,
      last_sequence: lines.length,
      steps: { total: 3, completed: 3, pending: 0 },
    })
    expect((await second.tool('write', { file_path: 'go.txt', content: 'go\n' })).exitCode).toBe(0)
    const driven = await handle.drive()
    expect(driven.exitCode, driven.output).toBe(0)
    expect(JSON.parse(driven.output)).toEqual([2, 4, 6, 8, 10])
    expect(await ranCounts(second)).toEqual({ s1: 1, s2: 1, s3: 1, s4: 1, s5: 1 })

    const history = await handle.history()
    expect(history.map((e) => e.sequence)).toEqual(history.map((_, i) => i + 1))
    for (const step of ['s1', 's2', 's3', 's4', 's5'])
      expect(
        history.filter((e) => e.type === 'step_completed' && e.step_id === step),
        step,
      ).toHaveLength(1)
    expect(history.at(-1)).toMatchObject({ type: 'run_completed', output: [2, 4, 6, 8, 10] })
    // The torn line is gone, every line whole, the first ones as they were.
    const after = (await backend.raw(JOURNAL))!
    expect(after.startsWith(journal)).toBe(true)
    expect(after.endsWith('\n')).toBe(true)
    expect(
      after
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual(history)
    expect(await handle.cancel()).toBe(false)
  } finally {
    await second.close()
  }
}

describe('workspace workflow store on S3 (s3rver)', () => {
  const BUCKET = 'workflow-bucket'
  let server: s3raw.S3rverHandle
  let client: S3Client
  beforeAll(async () => {
    server = await s3raw.startS3rver([BUCKET])
    client = server.client()
  }, 60_000)
  afterAll(async () => server?.close())

  it('suspends, resumes in a recreated session, and finishes without re-running a step', async () => {
    const prefix = s3raw.freshPrefix('wf/')
    const decoder = new TextDecoder()
    await suspendAndResume({
      workspace: () => s3Workspace({ bucket: BUCKET, prefix, client }),
      raw: async (path) => {
        const bytes = await s3raw.rawBytes(client, BUCKET, prefix + path)
        return bytes === undefined ? undefined : decoder.decode(bytes)
      },
      put: (path, text) => s3raw.seed(client, BUCKET, prefix, { [path]: text }),
    })
  }, 120_000)
})

describe("workspace workflow store on R2 (Miniflare's workerd)", () => {
  let r2: r2raw.LocalR2
  beforeAll(async () => {
    r2 = await r2raw.startLocalR2()
  }, 60_000)
  afterAll(async () => r2?.close())

  it('suspends, resumes in a recreated session, and finishes without re-running a step', async () => {
    const prefix = r2raw.freshPrefix('wf/')
    const decoder = new TextDecoder()
    await suspendAndResume({
      workspace: () => r2Workspace(r2.bucket, { prefix }),
      raw: async (path) => {
        const bytes = await r2raw.rawBytes(r2.bucket, prefix + path)
        return bytes === undefined ? undefined : decoder.decode(bytes)
      },
      put: (path, text) => r2raw.seed(r2.bucket, prefix, { [path]: text }),
    })
  }, 120_000)
})
