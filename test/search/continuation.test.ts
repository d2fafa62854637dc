import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  Agent,
  IsoagentError,
  memoryWorkspace,
  WorkspacePath,
  type FileScanner,
  type Session,
  type WorkspaceServices,
} from '../../adapters/index.ts'
import { runFileScanJob } from '../../src/tools/search/pipeline/scan-job.ts'
import { localWorkspace } from '../../adapters/node/index.ts'

// A page that ends keeps its walk and the scans that ran past it for the page that continues at
// its cursor. These tests check that continuing gives exactly what a fresh start at the cursor
// gives, that the kept walk is really used, and that it is dropped when the workspace may change.

/** 12 directories of 3 levels, 300 files: enough for scanner threads to get whole directories. */
function treeFiles(): Record<string, string> {
  const files: Record<string, string> = {}
  let seed = 11
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
  const words = ['alpha', 'needle', 'Needle', 'beta', 'gamma']
  for (let i = 0; i < 300; i++) {
    const dir = `p${i % 4}/d${i % 3}${i % 2 ? `/e${i % 5}` : ''}`
    const lines = Array.from({ length: next() % 12 }, () =>
      Array.from({ length: 1 + (next() % 4) }, () => words[next() % words.length]).join(' '),
    )
    files[`${dir}/f${i}.${i % 3 ? 'ts' : 'md'}`] = lines.join('\n') + '\n'
  }
  files['.gitignore'] = 'p3/d1/\n'
  return files
}

const QUERIES: Record<string, unknown>[] = [
  { mode: 'grep', query: 'needle', output_mode: 'files_with_matches', limit: 7 },
  { mode: 'grep', query: 'needle', output_mode: 'count', limit: 9, include: '*.ts' },
  { mode: 'grep', query: 'Needle|gamma', output_mode: 'content', context: 1, limit: 13 },
  { mode: 'grep', query: 'needle', output_mode: 'content', limit: 3 },
  { mode: 'grep', query: 'needle', output_mode: 'files_with_matches', limit: 5, sort: 'backend' },
  { mode: 'grep', query: 'alpha', output_mode: 'content', limit: 4, sort: 'backend' },
  { mode: 'glob', query: '**/*.ts', limit: 11 },
  { mode: 'glob', query: '*.md', limit: 6, path: 'p1' },
  { mode: 'glob', query: 'p*/d0/**', limit: 8, sort: 'backend' },
]

type Page = { output: string; next_cursor: string | null }

async function pageThrough(
  pageSession: () => Promise<Session>,
  args: Record<string, unknown>,
): Promise<Page[]> {
  const pages: Page[] = []
  let cursor: string | undefined
  do {
    const session = await pageSession()
    const r = await session.tool('search', cursor === undefined ? args : { ...args, cursor })
    expect(r.exitCode, r.output).toBe(0)
    const next_cursor = (r.metadata?.next_cursor as string | null) ?? null
    pages.push({ output: r.output, next_cursor })
    cursor = next_cursor ?? undefined
  } while (cursor !== undefined && pages.length < 500)
  return pages
}

describe.each(['memory', 'local, one thread', 'local, two threads'] as const)(
  'paging on a %s workspace',
  (kind) => {
    const files = treeFiles()
    let root: string
    let open: () => WorkspaceServices
    const sessions: Session[] = []
    const newSession = async () => {
      const s = await Agent.create().session(open())
      sessions.push(s)
      return s
    }
    beforeAll(() => {
      root = mkdtempSync(join(tmpdir(), 'isoagent-continue-'))
      for (const [p, c] of Object.entries(files)) {
        mkdirSync(dirname(join(root, p)), { recursive: true })
        writeFileSync(join(root, p), c)
      }
      open =
        kind === 'memory'
          ? () => memoryWorkspace(files)
          : () => localWorkspace(root, { searchThreads: kind === 'local, one thread' ? 0 : 2 })
    })
    afterAll(async () => {
      for (const s of sessions) await s.close()
      rmSync(root, { recursive: true, force: true })
    })

    it('continued pages equal fresh starts at each cursor, and join to the whole result', async () => {
      for (const q of QUERIES) {
        const one = await newSession()
        // Warm the scanner threads so that directories are handed over whole.
        await one.tool('search', { mode: 'grep', query: 'x', output_mode: 'summary' })
        const continued = await pageThrough(async () => one, q)
        const fresh = await pageThrough(newSession, q)
        expect(continued.length, JSON.stringify(q)).toBeGreaterThan(2)
        expect(continued, JSON.stringify(q)).toEqual(fresh)
        // Context separators (`--`) at a page's edge are the page's own.
        const lines = (output: string) =>
          output.split('\n').filter((l) => !l.startsWith('... (more') && l !== '--')
        const whole = await one.tool('search', { ...q, limit: 1000 })
        expect(whole.metadata!.next_cursor).toBeNull()
        expect(
          continued.flatMap((p) => lines(p.output)),
          JSON.stringify(q),
        ).toEqual(lines(whole.output))
      }
    }, 60_000)
  },
)

/** A memory workspace whose directory listings are counted. */
function countingWorkspace(files: Record<string, string>) {
  const inner = memoryWorkspace(files)
  const counts = { lists: 0, byPath: new Map<string, number>() }
  const count = (path: string) => {
    counts.lists++
    counts.byPath.set(path, (counts.byPath.get(path) ?? 0) + 1)
  }
  const workspace: WorkspaceServices = {
    ...inner,
    list(path, options) {
      count(path)
      return inner.list(path, options)
    },
    listNow(path, options) {
      count(path)
      return inner.listNow!(path, options)
    },
  }
  return { workspace, counts }
}

describe('the kept walk', () => {
  const files: Record<string, string> = {}
  for (let d = 0; d < 10; d++)
    for (let f = 0; f < 10; f++) files[`d${d}/f${f}.txt`] = f % 2 ? 'needle\n' : 'hay\n'
  const args = { mode: 'grep', query: 'needle', output_mode: 'files_with_matches', limit: 4 }

  it('is continued by the next page: every directory is listed once', async () => {
    const { workspace, counts } = countingWorkspace(files)
    const session = await Agent.create().session(workspace)
    const pages = await pageThrough(async () => session, args)
    expect(pages).toHaveLength(13)
    // The root, ten directories, and nothing listed twice.
    expect(counts.lists).toBe(11)
    // A read-only call between pages keeps it: the second page lists no directory again.
    counts.byPath.clear()
    const first = await session.tool('search', args)
    await session.readFile('d0/f1.txt')
    const second = await session.tool('search', {
      ...args,
      cursor: first.metadata!.next_cursor as string,
    })
    expect(second.output).toBe(pages[1]!.output)
    expect(counts.byPath.get('')).toBe(1)
    expect([...counts.byPath.values()].every((n) => n === 1)).toBe(true)
    await session.close()
  })

  it('is dropped when a call that may change the workspace runs: the next page sees the change', async () => {
    const { workspace, counts } = countingWorkspace(files)
    const session = await Agent.create().session(workspace)
    const first = await session.tool('search', args)
    expect(first.metadata!.paths ?? first.output.split('\n').slice(0, 4)).toEqual([
      'd0/f1.txt',
      'd0/f3.txt',
      'd0/f5.txt',
      'd0/f7.txt',
    ])
    const listed = counts.lists
    // After the cursor (d0/f7.txt), in a directory the kept walk has already listed.
    expect((await session.writeFile('d0/f8.txt', 'needle\n')).exitCode).toBe(0)
    const second = await session.tool('search', {
      ...args,
      cursor: first.metadata!.next_cursor as string,
    })
    expect(second.output.split('\n').slice(0, 3)).toEqual(['d0/f8.txt', 'd0/f9.txt', 'd1/f1.txt'])
    // A fresh walk to the cursor: the root and d0 are listed again.
    expect(counts.lists).toBeGreaterThan(listed)
    await session.close()
  })

  it('in content mode too: a page that ends at a file end resumes after it, not at the next match', async () => {
    const session = await Agent.create().session(
      memoryWorkspace({ 'first.txt': 'needle 1\n', 'z5.txt': 'needle 5\n' }),
    )
    const content = { mode: 'grep', query: 'needle', output_mode: 'content', limit: 1 }
    const first = await session.tool('search', content)
    expect(first.output.split('\n')[0]).toBe('first.txt:1:needle 1')
    // Between the last file shown and the next one that matches.
    expect((await session.writeFile('z1.txt', 'needle new\n')).exitCode).toBe(0)
    const lines: string[] = []
    for (let cursor = first.metadata!.next_cursor as string | null; cursor !== null;) {
      const page = await session.tool('search', { ...content, cursor })
      lines.push(page.output.split('\n')[0]!)
      cursor = page.metadata!.next_cursor as string | null
    }
    expect(lines).toEqual(['z1.txt:1:needle new', 'z5.txt:1:needle 5'])
    await session.close()
  })

  it('is not continued by a page of another size in content mode (it caps each file at its own)', async () => {
    const many: Record<string, string> = {}
    for (let f = 0; f < 6; f++)
      many[`d/f${f}.txt`] = Array.from({ length: 9 }, (_, k) => `needle ${f}.${k}`).join('\n')
    const q = { mode: 'grep', query: 'needle', output_mode: 'content', limit: 2 }
    const one = await Agent.create().session(memoryWorkspace(many))
    const other = await Agent.create().session(memoryWorkspace(many))
    const first = await one.tool('search', q)
    const cursor = first.metadata!.next_cursor as string
    for (const limit of [7, 20]) {
      const page = { ...q, limit, cursor }
      const fresh = await other.tool('search', page)
      // Keep a walk at this cursor made for pages of 2, then ask for a bigger page.
      await one.tool('search', q)
      expect((await one.tool('search', page)).output).toBe(fresh.output)
    }
    await one.close()
    await other.close()
  })

  it('is dropped when a call that may change the workspace ends, if it was kept while that call ran', async () => {
    const { workspace } = countingWorkspace(files)
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let started!: () => void
    const running = new Promise<void>((resolve) => (started = resolve))
    // A tool that writes behind the kernel's back while it runs, as a build in `bash` would.
    const session = await Agent.create().session(workspace, {
      tools: [
        {
          name: 'build',
          description: 'writes a file when released',
          parameters: { type: 'object', additionalProperties: false, properties: {} },
          async run() {
            started()
            await gate
            await workspace.write(
              WorkspacePath.parse('d0/f8.txt'),
              new TextEncoder().encode('needle\n'),
            )
            return 'built'
          },
        },
      ],
    })
    const building = session.tool('build', {})
    await running
    const first = await session.tool('search', args)
    release()
    expect((await building).exitCode).toBe(0)
    const second = await session.tool('search', {
      ...args,
      cursor: first.metadata!.next_cursor as string,
    })
    expect(second.output.split('\n')[0]).toBe('d0/f8.txt')
    await session.close()
  })

  it('reads nothing more once dropped: work given up by the scanner is not done here instead', async () => {
    const many: Record<string, string> = {}
    for (let f = 0; f < 400; f++) many[`d${f % 4}/f${String(f).padStart(3, '0')}.txt`] = 'needle\n'
    const inner = memoryWorkspace(many)
    let reads = 0
    let answered = 0
    const hang = (signal?: AbortSignal) =>
      new Promise<never>((_, reject) =>
        signal?.addEventListener('abort', () => reject(new IsoagentError('cancelled', 'stopped'))),
      )
    // A scanner that answers its first four batches and then waits, until the search stops.
    const scanner: FileScanner = {
      threads: 1,
      start() {},
      scan: (job, paths, signal) =>
        answered++ < 4 ? runFileScanJob(inner, job, paths, signal) : hang(signal),
      scanTree: (_job, _tree, signal) => hang(signal),
      listTree: (_tree, signal) => hang(signal),
    }
    const workspace: WorkspaceServices = {
      ...inner,
      scanner,
      read(path, range) {
        reads++
        return inner.read(path, range)
      },
      readNow(path, range) {
        reads++
        return inner.readNow!(path, range)
      },
    }
    const session = await Agent.create().session(workspace)
    const q = { mode: 'grep', query: 'needle', output_mode: 'files_with_matches', limit: 100 }
    const first = await session.tool('search', q)
    expect(first.metadata!.next_cursor).toEqual(expect.any(String))
    const before = reads
    await session.close()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(reads).toBe(before)
  })

  it('belongs to one session: another session starts afresh at the cursor, with the same page', async () => {
    const { workspace, counts } = countingWorkspace(files)
    const a = await Agent.create().session(workspace)
    const b = await Agent.create().session(workspace)
    const first = await a.tool('search', args)
    const cursor = first.metadata!.next_cursor as string
    const before = counts.lists
    const fromB = await b.tool('search', { ...args, cursor })
    expect(counts.lists).toBeGreaterThan(before)
    const fromA = await a.tool('search', { ...args, cursor })
    expect(fromA.output).toBe(fromB.output)
    await a.close()
    await b.close()
  })
})
