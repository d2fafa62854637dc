import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  Agent,
  IsoagentError,
  WorkspacePath,
  type FileScanner,
  type Session,
  type WorkspaceServices,
} from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import { createWorkerPool, workerScanner } from '../../adapters/node/scan-pool.ts'
import type { ScanWorkerRequest } from '../../adapters/node/scan-worker.ts'

/** A tree of 400 files: enough for a grep to hand most of them to the scanner in batches. */
function writeTree(root: string) {
  let seed = 7
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
  const words = [
    'alpha',
    'needle',
    'Needle',
    'beta',
    'gamma',
    'NEEDLE',
    'delta',
    'kelvin',
    'ſtraße',
  ]
  for (let i = 0; i < 400; i++) {
    // Depth 1 (scanned in batches), 2 and 3 (directories handed over whole).
    const dir =
      i % 3 === 0
        ? join(root, `pkg${i % 7}`)
        : join(root, `pkg${i % 7}`, `d${i % 13}`, ...(i % 2 ? [`e${i % 4}`] : []))
    mkdirSync(dir, { recursive: true })
    const lines: string[] = []
    const n = next() % 60
    for (let l = 0; l < n; l++)
      lines.push(
        Array.from({ length: 1 + (next() % 8) }, () => words[next() % words.length]).join(' '),
      )
    const eol = i % 5 === 0 ? '\r\n' : '\n'
    const name = i % 3 === 0 ? `top${i}.txt` : `f${i}.txt`
    writeFileSync(join(dir, name), lines.join(eol) + (i % 4 ? eol : ''))
  }
  writeFileSync(join(root, 'pkg1', 'bin.dat'), Buffer.from([0x6e, 0x65, 0x65, 0, 1, 2, 3]))
  writeFileSync(join(root, 'pkg2', 'long.txt'), 'needle ' + 'x'.repeat(11 * 1024 * 1024) + '\n')
  // Over the 1 MiB first read, so the worker streams the rest.
  writeFileSync(
    join(root, 'pkg3', 'big.txt'),
    Array.from({ length: 60_000 }, (_, k) =>
      k % 997 === 0 ? `needle ${k}` : `line ${k} beta`,
    ).join('\n'),
  )
  // One directory dense with matches: pages of a few files end inside it.
  mkdirSync(join(root, 'pkg3', 'dense'), { recursive: true })
  for (let k = 0; k < 12; k++)
    writeFileSync(join(root, 'pkg3', 'dense', `n${k}.txt`), `Needle ${k}\n`)
  writeFileSync(join(root, '.gitignore'), 'pkg6/d1/\n')
}

/** A workspace whose scanner is watched (and optionally disturbed) by the test. */
function watched(
  ws: WorkspaceServices,
  hooks: {
    /** Called before a batch or a directory goes to the workers. */
    before?: (paths: readonly WorkspacePath[], dir?: WorkspacePath) => void
    /** Make every scanner call fail, as if its workers died. */
    fail?: boolean
  } = {},
) {
  const calls = { batches: 0, trees: 0, resumed: 0, lists: 0, paths: 0, folded: 0 }
  const inner = ws.scanner!
  const died = () => Promise.reject(new Error('worker died'))
  const scanner: FileScanner = {
    get threads() {
      return inner.threads
    },
    // These trees are small: globs hand directories over at once.
    listAfterMs: 0,
    start: () => inner.start(),
    scan(job, paths, signal) {
      calls.batches++
      calls.paths += paths.length
      hooks.before?.(paths)
      return hooks.fail ? died() : inner.scan(job, paths, signal)
    },
    async scanTree(job, tree, signal) {
      calls.trees++
      if (tree.after !== undefined) calls.resumed++
      for (const dir of tree.dirs) hooks.before?.([], dir)
      if (hooks.fail) return died()
      const done = await inner.scanTree(job, tree, signal)
      // An entry may stand for a run of files without matches.
      for (const d of done)
        for (const f of d.files) {
          calls.paths += f.files ?? 1
          if (f.files !== undefined) calls.folded++
        }
      return done
    },
    async listTree(tree, signal) {
      calls.lists++
      for (const dir of tree.dirs) hooks.before?.([], dir)
      if (hooks.fail) return died()
      const done = await inner.listTree(tree, signal)
      for (const d of done) calls.paths += d.walked
      return done
    },
  }
  return { workspace: { ...ws, scanner } satisfies WorkspaceServices, calls }
}

/** A scanner job counting the lines that match `pattern`. */
const countJob = (pattern: string) => ({
  pattern,
  caseSensitive: true,
  keepText: false,
  firstOnly: false,
  context: 0,
  maxMatches: Number.POSITIVE_INFINITY,
})

/** Start the scanner's workers and wait until they all take work. */
async function warm(ws: WorkspaceServices, threads: number) {
  ws.scanner!.start()
  for (let i = 0; i < 400 && ws.scanner!.threads < threads; i++)
    await new Promise((r) => setTimeout(r, 50))
  expect(ws.scanner!.threads).toBe(threads)
  return ws
}

const QUERIES: Record<string, unknown>[] = [
  { mode: 'grep', query: 'needle', output_mode: 'summary' },
  { mode: 'grep', query: 'needle', case_sensitive: false, output_mode: 'summary' },
  { mode: 'grep', query: 'ne+dle \\d+', output_mode: 'count', limit: 1000 },
  { mode: 'grep', query: 'Needle|gamma', output_mode: 'files_with_matches', limit: 1000 },
  { mode: 'grep', query: 'needle', output_mode: 'content', context: 2, limit: 1000 },
  { mode: 'grep', query: 'STRASSE', case_sensitive: false, output_mode: 'content', limit: 1000 },
  { mode: 'grep', query: 'kelvin', case_sensitive: false, output_mode: 'count', limit: 1000 },
]

async function allPages(session: Session, args: Record<string, unknown>) {
  const pages: { output: string; metadata: Record<string, unknown> }[] = []
  let cursor: string | undefined
  do {
    const r = await session.tool('search', cursor === undefined ? args : { ...args, cursor })
    expect(r.exitCode, r.output).toBe(0)
    pages.push({ output: r.output, metadata: r.metadata as Record<string, unknown> })
    cursor = (r.metadata as { next_cursor?: string | null }).next_cursor ?? undefined
  } while (cursor !== undefined)
  return pages
}

describe('grep on scanner threads (local disk)', () => {
  let root: string
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'isoagent-pool-'))
    writeTree(root)
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('hands files to the workers and returns exactly what one thread returns', async () => {
    const one = await Agent.create().session(localWorkspace(root, { searchThreads: 0 }))
    const { workspace, calls } = watched(await warm(localWorkspace(root, { searchThreads: 2 }), 2))
    const pooled = await Agent.create().session(workspace)
    // Hundreds of requests share one signal per grep: no listener pile-up warnings.
    const warnings: string[] = []
    const onWarning = (w: Error) => warnings.push(w.message)
    process.on('warning', onWarning)
    try {
      for (const q of QUERIES) {
        const before = calls.paths
        const expected = await allPages(one, q)
        const got = await allPages(pooled, q)
        expect(got, JSON.stringify(q)).toEqual(expected)
        expect(calls.paths - before, JSON.stringify(q)).toBeGreaterThan(250)
      }
      // Paged: small pages and pages that end inside a file join to the same result.
      // Backend order pages by skipping the matching files of earlier pages.
      for (const output_mode of ['files_with_matches', 'count', 'content']) {
        // Directories of several matching files each, pages of two: a page's files sit inside them.
        const q = { mode: 'grep', query: 'Needle \\d', output_mode, sort: 'backend', limit: 2 }
        const pages = await allPages(pooled, q)
        expect(pages.length).toBeGreaterThan(2)
        expect(pages).toEqual(await allPages(one, q))
      }
      for (const [query, limit] of [
        ['needle', 250],
        ['needle \\d+', 7],
        ['[Nn]eedle', 5],
      ] as const) {
        const q = { mode: 'grep', query, output_mode: 'content', context: 1, limit }
        const pages = await allPages(pooled, q)
        expect(pages.length).toBeGreaterThan(2)
        expect(pages).toEqual(await allPages(one, q))
      }
      expect(calls.batches).toBeGreaterThan(0)
      expect(calls.trees).toBeGreaterThan(0)
      // Runs of files without matches came back folded, and the pages still equal one thread's.
      expect(calls.folded).toBeGreaterThan(0)
      // Content pages: a directory handed over stops at the page size and is handed over again.
      expect(calls.resumed).toBeGreaterThan(0)
      const summary = (await allPages(pooled, QUERIES[0]!))[0]!.metadata
      expect(summary.files_skipped).toMatchObject({ binary: 1 })
      await new Promise((r) => setTimeout(r, 10))
      expect(warnings).toEqual([])
    } finally {
      process.off('warning', onWarning)
      await one.close()
      await pooled.close()
    }
  }, 60_000)

  it('globs on the workers: whole directories walked there give exactly the one-thread pages', async () => {
    const one = await Agent.create().session(localWorkspace(root, { searchThreads: 0 }))
    const { workspace, calls } = watched(await warm(localWorkspace(root, { searchThreads: 2 }), 2))
    const pooled = await Agent.create().session(workspace)
    try {
      for (const q of [
        { mode: 'glob', query: '*.txt', limit: 1000 },
        { mode: 'glob', query: '**/*.txt', limit: 37 },
        { mode: 'glob', query: 'pkg*/d1*/**', limit: 9 },
        { mode: 'glob', query: '*.txt', include: '!pkg2/**', limit: 50, sort: 'backend' },
        { mode: 'glob', query: 'f*.txt', path: 'pkg4', limit: 5 },
      ]) {
        const before = calls.lists
        const small = q.path !== undefined
        // What a page counts as walked depends on how far the threads ran ahead of it.
        const seen = (pages: Awaited<ReturnType<typeof allPages>>) =>
          pages.map(({ output, metadata }) => ({
            output,
            paths: metadata.paths,
            next_cursor: metadata.next_cursor,
          }))
        const pages = seen(await allPages(pooled, q))
        expect(pages.length, JSON.stringify(q)).toBeGreaterThan(q.limit === 1000 ? 0 : 2)
        expect(pages, JSON.stringify(q)).toEqual(seen(await allPages(one, q)))
        // A directory of a few dozen files is walked before any goes to the threads.
        if (!small) expect(calls.lists - before, JSON.stringify(q)).toBeGreaterThan(0)
      }
    } finally {
      await one.close()
      await pooled.close()
    }
  }, 60_000)

  it('work kept for the next page stops when the session closes or the workspace may change', async () => {
    const signals: AbortSignal[] = []
    const ws = await warm(localWorkspace(root, { searchThreads: 2 }), 2)
    const inner = ws.scanner!
    const scanner: FileScanner = {
      get threads() {
        return inner.threads
      },
      listAfterMs: 0,
      start: () => inner.start(),
      scan: (job, paths, signal) => inner.scan(job, paths, signal),
      scanTree: (job, tree, signal) => inner.scanTree(job, tree, signal),
      listTree(tree, signal) {
        signals.push(signal!)
        return inner.listTree(tree, signal)
      },
    }
    // A first page long enough for the walk to hand directories over.
    const q = { mode: 'glob', query: '*.txt', limit: 150 }
    for (const end of ['close', 'write'] as const) {
      signals.length = 0
      // Closing a session closes its workspace: the workers start again.
      await warm(ws, 2)
      const session = await Agent.create().session({ ...ws, scanner })
      const first = await session.tool('search', q)
      expect(first.metadata!.next_cursor).toEqual(expect.any(String))
      expect(signals.length).toBeGreaterThan(0)
      const kept = signals[signals.length - 1]!
      expect(kept.aborted).toBe(false)
      if (end === 'close') await session.close()
      else {
        expect((await session.writeFile('pkg0/new.txt', 'x\n')).exitCode).toBe(0)
        rmSync(join(root, 'pkg0', 'new.txt'))
        await session.close()
      }
      expect(kept.aborted, end).toBe(true)
    }
    await ws.close!()
  }, 60_000)

  it('a file gone before its worker opened it counts as vanished; one gone before a worker walked its directory is not seen', async () => {
    const victims = ['pkg5/top12.txt', 'pkg5/d5/f278.txt']
    const one = await Agent.create().session(localWorkspace(root, { searchThreads: 0 }))
    const args = { mode: 'grep', query: 'alpha', output_mode: 'summary' }
    const all = (await one.tool('search', args)).metadata as { files_scanned: number }
    await one.close()
    const { workspace, calls } = watched(
      await warm(localWorkspace(root, { searchThreads: 1 }), 1),
      {
        before: (paths, dir) => {
          for (const v of victims)
            if (paths.includes(WorkspacePath.parse(v)) || (dir && v.startsWith(dir + '/')))
              unlinkSync(join(root, v))
        },
      },
    )
    const session = await Agent.create().session(workspace)
    try {
      const r = await session.tool('search', args)
      expect(r.exitCode, r.output).toBe(0)
      expect(calls.batches).toBeGreaterThan(0)
      expect(calls.trees).toBeGreaterThan(0)
      const meta = r.metadata as { files_scanned: number; files_skipped: { vanished: number } }
      // The batched file was walked here and gone when its worker opened it.
      expect(meta.files_skipped.vanished).toBe(1)
      // The other was gone before a worker listed its directory: never walked at all.
      expect(meta.files_scanned).toBe(all.files_scanned - 1)
    } finally {
      for (const v of victims) writeFileSync(join(root, v), 'alpha\n')
      await session.close()
    }
  })

  it('scans on the calling thread when the scanner fails, with the same result', async () => {
    const one = await Agent.create().session(localWorkspace(root, { searchThreads: 0 }))
    const { workspace, calls } = watched(
      await warm(localWorkspace(root, { searchThreads: 2 }), 2),
      { fail: true },
    )
    const broken = await Agent.create().session(workspace)
    try {
      for (const q of QUERIES.slice(0, 5))
        expect(await allPages(broken, q)).toEqual(await allPages(one, q))
      expect(calls.batches).toBeGreaterThan(0)
      expect(calls.trees).toBeGreaterThan(0)
    } finally {
      await one.close()
      await broken.close()
    }
  })

  it('a worker that cannot start rejects its batch; after three failures the scanner reports 0 threads', async () => {
    const pool = createWorkerPool({
      threads: 1,
      entry: pathToFileURL(join(root, 'no-such-worker.js')),
    })
    const scanner = workerScanner({
      root,
      threads: 1,
      pool,
      options: { syncIo: true, chunkBytes: 1 << 20 },
    })
    const job = countJob('x')
    expect(scanner.threads).toBe(0)
    for (let i = 0; i < 3; i++)
      await expect(scanner.scan(job, [WorkspacePath.parse('a.txt')])).rejects.toThrow()
    expect(scanner.threads).toBe(0)
    await expect(scanner.scan(job, [WorkspacePath.parse('a.txt')])).rejects.toMatchObject({
      code: 'unsupported',
    })
    await scanner.close()
    await pool.close()
  }, 60_000)

  it('one pool of workers serves every workspace; a root that moved is refused, not read', async () => {
    const pool = createWorkerPool({ threads: 1 })
    const job = countJob('needle')
    const other = mkdtempSync(join(tmpdir(), 'isoagent-pool-other-'))
    writeFileSync(join(other, 'x.txt'), 'needle needle\nneedle\n')
    const options = { syncIo: true, chunkBytes: 1 << 20 }
    const a = workerScanner({ root, threads: 1, pool, options })
    const b = workerScanner({ root: other, threads: 1, pool, options })
    try {
      const [fromA, fromB] = await Promise.all([
        a.scan(job, [WorkspacePath.parse('pkg3/big.txt')]),
        b.scan(job, [WorkspacePath.parse('x.txt')]),
      ])
      expect(fromA).toEqual([{ result: expect.objectContaining({ matches: 61 }) }])
      expect(fromB).toEqual([{ result: expect.objectContaining({ matches: 2 }) }])
      expect(pool.threads).toBe(1)
      // Closing one workspace gives up only its own work.
      await a.close()
      expect((await b.scan(job, [WorkspacePath.parse('x.txt')])).length).toBe(1)
      // A root that is no longer its real path (here: a link to it) is refused.
      symlinkSync(other, `${other}-link`)
      const moved = workerScanner({ root: `${other}-link`, threads: 1, pool, options })
      await expect(moved.scan(job, [WorkspacePath.parse('x.txt')])).rejects.toThrow(/moved/)
    } finally {
      rmSync(`${other}-link`, { force: true })
      rmSync(other, { recursive: true, force: true })
      await pool.close()
    }
  }, 60_000)

  it('the last workspace to close stops the workers; a later scan starts them again', async () => {
    const pool = createWorkerPool({ threads: 1 })
    const job = countJob('needle')
    const options = { syncIo: true, chunkBytes: 1 << 20 }
    const a = workerScanner({ root, threads: 1, pool, options })
    const b = workerScanner({ root, threads: 1, pool, options })
    const idle = workerScanner({ root, threads: 1, pool, options })
    const big = [WorkspacePath.parse('pkg3/big.txt')]
    try {
      await Promise.all([a.scan(job, big), b.scan(job, big)])
      expect(pool.threads).toBe(1)
      await a.close()
      expect(pool.threads).toBe(1)
      // One that never scanned does not keep them either.
      await b.close()
      expect(pool.threads).toBe(0)
      expect(await a.scan(job, big)).toEqual([{ result: expect.objectContaining({ matches: 61 }) }])
      expect(pool.threads).toBe(1)
      await a.close()
      expect(pool.threads).toBe(0)
    } finally {
      await idle.close()
      await pool.close()
    }
  }, 60_000)

  it('cancels: an aborted search stops its batches, and the scanner works afterwards', async () => {
    const ws = localWorkspace(root, { searchThreads: 1 })
    const job = countJob('needle')
    const paths = Array.from({ length: 2000 }, () => WorkspacePath.parse('pkg2/long.txt'))
    const controller = new AbortController()
    const pending = ws.scanner!.scan(job, paths, controller.signal)
    setTimeout(() => controller.abort(), 50)
    const started = Date.now()
    const error = await pending.catch((e: unknown) => e)
    expect(IsoagentError.is(error, 'cancelled')).toBe(true)
    // 2,000 scans of an 11 MiB file take far longer than the cancellation did.
    expect(Date.now() - started).toBeLessThan(3_000)
    const after = await ws.scanner!.scan(job, [WorkspacePath.parse('pkg3/big.txt')])
    expect(after).toEqual([
      {
        result: expect.objectContaining({ binary: false, matches: 61 }),
      },
    ])
    await ws.close!()
    // Closed: its work is given up, and a new scan works.
    expect((await ws.scanner!.scan(job, [WorkspacePath.parse('pkg3/big.txt')])).length).toBe(1)
    await ws.close!()
  }, 60_000)

  it('queues requests in the pool: each goes to the first free worker; cancelled or given-up ones never run', async () => {
    const pool = createWorkerPool({ threads: 2 })
    const options = { syncIo: true, chunkBytes: 1 << 20 }
    const a = workerScanner({ root, threads: 2, pool, options })
    const b = workerScanner({ root, threads: 2, pool, options })
    const job = countJob('needle')
    const slow = Array.from({ length: 60 }, () => WorkspacePath.parse('pkg2/long.txt'))
    const quick = [WorkspacePath.parse('pkg3/big.txt')]
    try {
      // One long request, then many short ones. Assigned to workers as they were sent, half of
      // the short ones would wait behind the long one; from the pool's queue, at most one
      // (sent to the long one's worker before it was known to be long) does.
      // No literal to look for first: decoded and matched by a regex, seconds of work.
      const slowJob = countJob('[xz]{3}[yw]')
      let longDone = false
      const long = a.scan(slowJob, slow).then((r) => ((longDone = true), r))
      let beforeLong = 0
      const shorts = await Promise.all(
        Array.from({ length: 20 }, () =>
          a.scan(job, quick).then((r) => {
            if (!longDone) beforeLong++
            return r
          }),
        ),
      )
      expect(shorts.every((r) => r[0] && 'result' in r[0] && r[0].result.matches === 61)).toBe(true)
      expect(await long).toHaveLength(60)
      expect(beforeLong).toBeGreaterThanOrEqual(19)
      // Requests still in the pool's queue when their search aborts, or their workspace closes,
      // are rejected without running.
      const controller = new AbortController()
      const blockers = Array.from({ length: 4 }, () => a.scan(slowJob, slow))
      const queued = a.scan(job, quick, controller.signal)
      const fromB = b.scan(job, quick)
      controller.abort()
      await expect(queued).rejects.toMatchObject({ code: 'cancelled' })
      await a.close()
      for (const blocker of blockers)
        await expect(blocker).rejects.toMatchObject({ code: 'cancelled' })
      expect((await fromB)[0]).toMatchObject({ result: { matches: 61 } })
    } finally {
      await pool.close()
    }
  }, 60_000)

  it('a request waiting in the pool outlives the idle time while workers finish given-up work', async () => {
    // A stand-in worker that answers each request after the delay it names.
    const entry = join(root, 'slow-worker.mjs')
    writeFileSync(
      entry,
      `import { parentPort, workerData } from 'node:worker_threads'
      Atomics.store(workerData.ready, 0, 1)
      parentPort.on('message', (m) => setTimeout(() => parentPort.postMessage({ id: m.id, list: [m.tag] }), m.delay))`,
    )
    const pool = createWorkerPool({ threads: 1, idleMs: 50, entry: pathToFileURL(entry) })
    const request = (delay: number, tag: string) => (id: number, cancel: Int32Array[]) =>
      ({ id, delay, tag, cancel }) as unknown as ScanWorkerRequest
    try {
      pool.start()
      for (let i = 0; i < 100 && pool.threads < 1; i++) await new Promise((r) => setTimeout(r, 20))
      const a = {}
      const b = {}
      // The worker holds a's two requests; b's waits in the pool.
      const given = [0, 1].map((k) => pool.send(a, request(400, `a${k}`), undefined, []))
      const waiting = pool.send<string[]>(b, request(10, 'b'), undefined, [])
      pool.giveUp(a, new IsoagentError('cancelled', 'a closed'))
      for (const g of given) await expect(g).rejects.toMatchObject({ code: 'cancelled' })
      // Past the idle time with nothing in flight for anyone but b: b still gets its worker.
      expect(await waiting).toEqual(['b'])
    } finally {
      await pool.close()
    }
  }, 30_000)

  it('workers do not keep a finished process alive', () => {
    const script = `
      const { Agent } = await import(${JSON.stringify(new URL('../../dist/adapters/index.js', import.meta.url).href)})
      const { localWorkspace } = await import(${JSON.stringify(new URL('../../dist/adapters/node/index.js', import.meta.url).href)})
      const session = await Agent.create().session(localWorkspace(${JSON.stringify(root)}, { searchThreads: 2 }))
      const r = await session.tool('search', { mode: 'grep', query: 'needle', output_mode: 'summary' })
      console.log(r.output)
    `
    const started = Date.now()
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(run.stderr).toBe('')
    expect(run.stdout).toMatch(/matching lines in \d+ files/)
    // Idle workers exit after 2 minutes; unreferenced, they must not hold the process that long.
    expect(Date.now() - started).toBeLessThan(8_000)
  }, 40_000)
})
