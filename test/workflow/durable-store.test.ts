// The workspace file store on the local disk: a new journal is written whole (temp file fsync'd,
// renamed, folder fsync'd); one event is appended in place and fsync'd; a torn last line left by
// a crash is ignored, then dropped by the next append.
import nodeFs, { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import * as fs from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it, vi } from 'vitest'
import { workspaceWorkflowStore } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import { parseJournal } from '../../src/tools/dynamic-workflow/workspace-workflow-store.ts'

const roots: string[] = []
afterEach(() => {
  vi.restoreAllMocks()
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true })
})
const root = () => {
  const r = mkdtempSync(join(tmpdir(), 'isoagent-wf-durable-'))
  roots.push(r)
  return r
}

/** Record every fsync and fdatasync (of a file: its size then; of a folder: `dir`). */
async function recordSyncs(dir: string): Promise<string[]> {
  const probe = await fs.open(join(dir, 'probe'), 'w')
  const FileHandle = Object.getPrototypeOf(probe) as {
    sync(): Promise<void>
    datasync(): Promise<void>
  }
  await probe.close()
  const synced: string[] = []
  for (const method of ['sync', 'datasync'] as const) {
    const real = FileHandle[method]
    vi.spyOn(FileHandle, method).mockImplementation(async function (this: fs.FileHandle) {
      const stat = await this.stat()
      synced.push(stat.isDirectory() ? 'dir' : `${method}:${stat.size}`)
      return real.call(this)
    })
  }
  // The local disk's append syncs a descriptor (node:fs fdatasync), not a FileHandle.
  const realFdatasync = nodeFs.fdatasync
  vi.spyOn(nodeFs, 'fdatasync').mockImplementation(((fd: number, done: (e: unknown) => void) => {
    synced.push(`datasync:${nodeFs.fstatSync(fd).size}`)
    realFdatasync(fd, done)
  }) as typeof nodeFs.fdatasync)
  return synced
}

it("writes a new journal whole (file and folder fsync), then appends each event in place, fsync'd but for a start", async () => {
  const dir = root()
  const synced = await recordSyncs(dir)
  const store = workspaceWorkflowStore(localWorkspace(dir))
  const file = join(dir, '.a3s/workflow/r1.jsonl')
  const size = () => Buffer.byteLength(readFileSync(file))
  await store.append('r1', 0, [{ type: 'run_created', run_id: 'r1', source_hash: 'h', input: {} }])
  // The temp file holding the whole new journal, then the folder after the rename.
  expect(synced.splice(0)).toEqual([`sync:${size()}`, 'dir'])
  const ino = statSync(file).ino
  await store.append('r1', 1, [{ type: 'step_started', step_id: 's', attempt: 1 }])
  // A start is added at the end of the same file and flushed with the next line.
  expect(synced.splice(0)).toEqual([])
  expect(statSync(file).ino).toBe(ino)
  await store.append('r1', 2, [
    { type: 'step_failed', step_id: 's', attempt: 1, error: 'x', exhausted: false },
  ])
  // Any other event: added at the end, the file fsync'd (its data), the folder not.
  expect(synced.splice(0)).toEqual([`datasync:${size()}`])
  expect(statSync(file).ino).toBe(ino)
  await store.append('r1', 3, [{ type: 'step_started', step_id: 's', attempt: 2 }])
  // Several events at once are all or none: the journal is written whole again.
  await store.append('r1', 4, [
    { type: 'step_completed', step_id: 's', attempt: 2, output: 1 },
    { type: 'run_completed', output: 1 },
  ])
  expect(synced.splice(0)).toEqual([`sync:${size()}`, 'dir'])
  expect((await store.history('r1')).map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6])
})

it('drops a torn last line (a crash mid-append) at the next append, losing nothing before it', async () => {
  const dir = root()
  const store = workspaceWorkflowStore(localWorkspace(dir))
  await store.append('t', 0, [{ type: 'run_created', run_id: 't', source_hash: 'h', input: {} }])
  await store.append('t', 1, [{ type: 'step_started', step_id: 's', attempt: 1 }])
  const file = join(dir, '.a3s/workflow/t.jsonl')
  const whole = readFileSync(file, 'utf8')
  appendFileSync(file, '{"type":"step_completed","step_id":"s","att')
  // A new store (a new process) reads the two whole events and ignores the torn one.
  const again = workspaceWorkflowStore(localWorkspace(dir))
  expect((await again.history('t')).map((e) => e.type)).toEqual(['run_created', 'step_started'])
  await again.append('t', 2, [{ type: 'step_completed', step_id: 's', attempt: 1, output: 7 }])
  const text = readFileSync(file, 'utf8')
  expect(text.startsWith(whole)).toBe(true)
  expect(text.slice(whole.length)).toMatch(/^\{"type":"step_completed"[^\n]*"output":7[^\n]*\}\n$/)
  // The store that wrote before the tear sees a changed file, reads it, and appends after it.
  await expect(store.append('t', 2, [{ type: 'run_completed', output: 0 }])).rejects.toMatchObject({
    code: 'version_conflict',
  })
  await store.append('t', 3, [{ type: 'run_completed', output: 7 }])
  expect((await again.history('t')).map((e) => [e.sequence, e.type])).toEqual([
    [1, 'run_created'],
    [2, 'step_started'],
    [3, 'step_completed'],
    [4, 'run_completed'],
  ])
})

it('shows a reader whole events in order while appends run (at most a torn last line)', async () => {
  const dir = root()
  const store = workspaceWorkflowStore(localWorkspace(dir))
  const path = join(dir, '.a3s/workflow/big.jsonl')
  await store.append('big', 0, [
    { type: 'run_created', run_id: 'big', source_hash: 'h', input: {} },
  ])
  let done = false
  let reads = 0
  let seen = 0
  const reader = (async () => {
    while (!done) {
      const { events } = parseJournal(readFileSync(path, 'utf8'))
      expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1))
      expect(events.length).toBeGreaterThanOrEqual(seen)
      seen = events.length
      reads++
      await new Promise((r) => setImmediate(r))
    }
  })()
  const output = 'x'.repeat(16 * 1024)
  for (let i = 0; i < 20; i++)
    await store.append('big', i + 1, [
      { type: 'step_completed', step_id: `s${i}`, attempt: 1, output },
    ])
  done = true
  await reader
  expect(reads).toBeGreaterThan(5)
  expect(await store.history('big')).toHaveLength(21)
})
