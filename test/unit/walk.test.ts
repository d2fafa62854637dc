import { describe, expect, it } from 'vitest'
import { IsoagentError, memoryWorkspace, type WorkspaceServices } from '../../adapters/index.ts'
import { Walk, walkFiles } from '../../src/tools/search/walk/walk.ts'
import { WorkspacePath } from '../../src/workspace/workspace-path.ts'

const files: Record<string, string> = { '.gitignore': 'skip/\n', 'skip/x.txt': 'x' }
for (let d = 0; d < 6; d++) for (let f = 0; f < 3; f++) files[`d${d}/sub/f${f}.txt`] = 'x'
const expected = Object.keys(files)
  .filter((p) => !p.startsWith('.') && !p.startsWith('skip/'))
  .sort()

const skips = () => ({ unreadable_dirs: 0, unreadable_ignore_files: 0 })

/** A memory workspace whose awaited calls are counted, with or without its at-once ones. */
function counted(atOnce: boolean) {
  const { listNow, readNow, ...inner } = memoryWorkspace(files)
  const calls = { list: 0, read: 0, inFlight: 0, maxInFlight: 0 }
  const ws: WorkspaceServices = {
    ...inner,
    ...(atOnce ? { listNow, readNow } : {}),
    async list(path, options) {
      calls.list++
      calls.maxInFlight = Math.max(calls.maxInFlight, ++calls.inFlight)
      await new Promise((resolve) => setTimeout(resolve, 1))
      calls.inFlight--
      return inner.list(path, options)
    },
    async read(path, range) {
      calls.read++
      return inner.read(path, range)
    },
  }
  return { ws, calls }
}

describe('Walk', () => {
  it('runs at once where the workspace lists and reads at once: no listing is awaited', async () => {
    const { ws, calls } = counted(true)
    const walk = new Walk(ws, { start: WorkspacePath.parse('.'), skips: skips() })
    const seen: string[] = []
    // Only the start's stat is awaited; after it, every step is answered at once.
    let item = walk.step()
    if (item instanceof Promise) item = await item
    for (; item !== undefined; item = walk.step() as typeof item) {
      expect(item).not.toBeInstanceOf(Promise)
      seen.push(item as string)
    }
    expect(seen).toEqual(expected)
    expect(calls).toMatchObject({ list: 0, read: 0 })
  })

  it('awaits each listing elsewhere, fetching listings ahead, with the same files', async () => {
    const { ws, calls } = counted(false)
    const seen: string[] = []
    for await (const path of walkFiles(ws, { start: WorkspacePath.parse('.'), skips: skips() }))
      seen.push(path)
    expect(seen).toEqual(expected)
    // The root, six directories, their subdirectories: each listed once, several at a time.
    expect(calls.list).toBe(13)
    expect(calls.read).toBe(1)
    expect(calls.maxInFlight).toBeGreaterThan(1)
  })

  it('fetches ahead once listNow declines listings, as where it has none', async () => {
    const { ws, calls } = counted(false)
    const declining: WorkspaceServices = { ...ws, listNow: () => undefined }
    const seen: string[] = []
    for await (const path of walkFiles(declining, {
      start: WorkspacePath.parse('.'),
      skips: skips(),
    }))
      seen.push(path)
    expect(seen).toEqual(expected)
    expect(calls.list).toBe(13)
    expect(calls.maxInFlight).toBeGreaterThan(1)
  })

  it('stops at once when closed, and refuses to go on after its signal aborts', async () => {
    const { ws } = counted(true)
    const stop = new AbortController()
    const walk = new Walk(ws, {
      start: WorkspacePath.parse('.'),
      skips: skips(),
      signal: stop.signal,
    })
    let first = walk.step()
    if (first instanceof Promise) first = await first
    expect(first).toBe(expected[0])
    stop.abort()
    let failure: unknown
    try {
      for (let i = 0; i < expected.length; i++) walk.step()
    } catch (error) {
      failure = error
    }
    expect(failure).toMatchObject({ code: 'cancelled' })
    const closed = new Walk(ws, { start: WorkspacePath.parse('.'), skips: skips() })
    await closed.step()
    closed.close()
    expect(closed.step()).toBeUndefined()
  })

  it('leaves nothing unhandled when closed or cancelled while a step waits', async () => {
    const inner = memoryWorkspace({ 'a/x.txt': 'x', 'b/y.txt': 'y', 'c/z.txt': 'z' })
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    const { listNow: _l, readNow: _r, ...awaited } = inner
    const ws: WorkspaceServices = {
      ...awaited,
      async list(path, options) {
        await sleep(5)
        if (path === 'b') throw new IsoagentError('permission_denied', 'b: permission denied')
        return inner.list(path, options)
      },
    }
    // Closed: the listing of b fails after the walk is gone; the waiting step gives undefined.
    const walk = new Walk(ws, { start: WorkspacePath.parse('.'), skips: skips() })
    expect(await walk.step()).toBe('a/x.txt')
    const waiting = walk.step()
    walk.close()
    await sleep(30)
    expect(await waiting).toBeUndefined()
    // Cancelled while nobody waits on the step: its failure is there for whoever awaits it.
    const stop = new AbortController()
    const cancelled = new Walk(ws, {
      start: WorkspacePath.parse('.'),
      skips: skips(),
      signal: stop.signal,
    })
    expect(await cancelled.step()).toBe('a/x.txt')
    const next = cancelled.step()
    stop.abort()
    await sleep(30)
    await expect(next).rejects.toMatchObject({ code: 'cancelled' })
  })
})
