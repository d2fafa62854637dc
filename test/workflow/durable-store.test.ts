// The workspace file store on the local disk: each append is a complete journal written to a
// temp file, fsync'd, renamed into place, and its folder fsync'd; a reader never sees a part.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import * as fs from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it, vi } from 'vitest'
import { workspaceWorkflowStore } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'

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

it("fsyncs the journal's temp file and its folder before an append resolves", async () => {
  const dir = root()
  const probe = await fs.open(join(dir, 'probe'), 'w')
  const FileHandle = Object.getPrototypeOf(probe) as { sync(): Promise<void> }
  await probe.close()
  const synced: string[] = []
  const real = FileHandle.sync
  vi.spyOn(FileHandle, 'sync').mockImplementation(async function (this: fs.FileHandle) {
    const stat = await this.stat()
    synced.push(stat.isDirectory() ? 'dir' : `file:${stat.size}`)
    return real.call(this)
  })
  const store = workspaceWorkflowStore(localWorkspace(dir))
  await store.append('r1', 0, [{ type: 'run_created', run_id: 'r1', source_hash: 'h', input: {} }])
  const journal = readFileSync(join(dir, '.a3s/workflow/r1.jsonl'), 'utf8')
  // The temp file holding the whole new journal, then the folder after the rename.
  expect(synced).toEqual([`file:${Buffer.byteLength(journal)}`, 'dir'])
  synced.length = 0
  await store.append('r1', 1, [{ type: 'run_completed', output: 1 }])
  const after = readFileSync(join(dir, '.a3s/workflow/r1.jsonl'), 'utf8')
  expect(synced).toEqual([`file:${Buffer.byteLength(after)}`, 'dir'])
})

it('never shows a reader a partly written journal while appends run', async () => {
  const dir = root()
  const store = workspaceWorkflowStore(localWorkspace(dir))
  const path = join(dir, '.a3s/workflow/big.jsonl')
  await store.append('big', 0, [
    { type: 'run_created', run_id: 'big', source_hash: 'h', input: {} },
  ])
  let done = false
  let reads = 0
  const reader = (async () => {
    while (!done) {
      const text = readFileSync(path, 'utf8')
      expect(text.endsWith('\n')).toBe(true)
      for (const line of text.trimEnd().split('\n')) JSON.parse(line)
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
