import { execFileSync } from 'node:child_process'
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Agent, WorkspacePath, type Session } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import { listings } from '../../adapters/node/local-files.ts'
import { inKernelMemory } from '../../src/tools/search/bytes/simd-bytes.ts'

let root: string
let session: Session

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'isoagent-local-'))
  session = await Agent.create().session(localWorkspace(root))
})
afterEach(async () => {
  await session.close()
  rmSync(root, { recursive: true, force: true })
})

describe('local disk specifics', () => {
  it('replaces files by rename (new inode), keeps the mode, leaves no temp files', async () => {
    writeFileSync(join(root, 'run.sh'), '#!/bin/sh\necho hi\n')
    chmodSync(join(root, 'run.sh'), 0o751)
    const inode = statSync(join(root, 'run.sh')).ino
    expect((await session.editFile('run.sh', 'hi', 'there')).exitCode).toBe(0)
    expect((await session.writeFile('run.sh', '#!/bin/sh\necho replaced\n')).exitCode).toBe(0)
    expect(
      (await session.patchFile('run.sh', '@@ -2 +2 @@\n-echo replaced\n+echo patched\n')).exitCode,
    ).toBe(0)
    const after = statSync(join(root, 'run.sh'))
    expect(after.mode & 0o7777).toBe(0o751)
    expect(after.ino).not.toBe(inode)
    expect(readFileSync(join(root, 'run.sh'), 'utf8')).toBe('#!/bin/sh\necho patched\n')
    expect(readdirSync(root)).toEqual(['run.sh'])
  })

  it('reports a version conflict when the file changes between read and write', async () => {
    writeFileSync(join(root, 'a.txt'), 'one\n')
    const ws = session.workspace
    const stat = await ws.stat(WorkspacePath.parse('a.txt'))
    writeFileSync(join(root, 'a.txt'), 'changed by someone else\n')
    await expect(
      ws.write(WorkspacePath.parse('a.txt'), new TextEncoder().encode('mine\n'), {
        precondition: { ifVersion: stat!.version },
      }),
    ).rejects.toMatchObject({ code: 'version_conflict' })
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('changed by someone else\n')
    expect(readdirSync(root)).toEqual(['a.txt'])
  })

  it('streams a large file in chunks and pages it exactly', async () => {
    const lines = Array.from({ length: 300_000 }, (_, i) => `row ${i}`)
    writeFileSync(join(root, 'big.txt'), lines.join('\n') + '\n')
    const r = await session.tool('read', { file_path: 'big.txt', offset: 250_000, limit: 3 })
    expect(r.output.split('\n').slice(0, 3)).toEqual([
      '250001\trow 250000',
      '250002\trow 250001',
      '250003\trow 250002',
    ])
    expect(r.metadata?.range).toMatchObject({ total_lines: 300_000, next_offset: 250_003 })
  })

  it('greps files over the first read side by side, each from its own bytes', async () => {
    // Over 1 MiB each: the first read of one is kept while the next files are read, so it must
    // not live in the scratch space those reads reuse.
    const one = await Agent.create().session(localWorkspace(root, { searchThreads: 0 }))
    const lines = (k: number) => Array.from({ length: 150_000 }, (_, i) => `b${k}-${i}`)
    for (const k of [1, 2, 3]) writeFileSync(join(root, `b${k}.txt`), lines(k).join('\n') + '\n')
    for (let k = 0; k < 40; k++) writeFileSync(join(root, `s${k}.txt`), `b1- s${k}\nb2-\n`)
    for (const s of [one, session]) {
      const counts = (await s.grep('b1-', { output_mode: 'count' })).split('\n')
      expect(counts).toEqual([
        'b1.txt:150000',
        ...Array.from({ length: 40 }, (_, k) => `s${k}.txt:1`).sort(),
      ])
      expect(await s.grep('b3-149999', { output_mode: 'content' })).toBe('b3.txt:150000:b3-149999')
      expect(await s.grep('^b2-0$')).toBe('b2.txt:1:b2-0')
    }
    await one.close()
  })

  it('prints the lines of files over the first read from whole reads, and streams one past the cap', async () => {
    // 1–12 MiB files are read whole into one buffer kept for that (the next file overwrites
    // it); the 13 MiB one is past the whole-read cap and takes the streaming scan.
    const MiB = 1024 * 1024
    const want: string[] = []
    for (const [name, size] of [
      ['c1.txt', 1.5 * MiB],
      ['c2.txt', 3 * MiB],
      ['c3.txt', 13 * MiB],
      ['c4.txt', 2 * MiB],
    ] as const) {
      const rows: string[] = []
      let bytes = 0
      for (let i = 0; bytes < size; i++) {
        const row =
          i % 5000 === 17 ? `${name} needle ${i}` : `${name} row ${i} ${'x'.repeat(i % 90)}`
        rows.push(row)
        bytes += row.length + 1
        if (row.includes('needle')) want.push(`${name}:${i + 1}:${row}`)
      }
      writeFileSync(join(root, name), rows.join('\n') + '\n')
    }
    writeFileSync(join(root, 'small.txt'), 'a needle\n')
    want.push('small.txt:1:a needle')
    const local = localWorkspace(root, { searchThreads: 0 })
    /** Reads the search waited for. */
    let waited = 0
    /** Whether each buffer the search read into lies in the SIMD kernels' memory. */
    const intoKernel: [string, boolean][] = []
    const one = await Agent.create().session({
      ...local,
      read: (...args) => (waited++, local.read(...args)),
      readStream: (...args) => (waited++, local.readStream(...args)),
      readNow: (path, range, into) => {
        if (into !== undefined) intoKernel.push([path, inKernelMemory(into)])
        return local.readNow!(path, range, into)
      },
    })
    for (const s of [one, session])
      expect((await s.grep('needle', { output_mode: 'content' })).split('\n')).toEqual(want)
    // Only the file over the cap was read in waited-for reads; the others were read at once.
    waited = 0
    const some = await one.grep('needle', { output_mode: 'content', include: 'c[124].txt' })
    expect(some.split('\n')).toEqual(want.filter((line) => /^c[124]/.test(line)))
    expect(waited).toBe(0)
    // Node runs the kernels: once a thread has seen that the local disk reads into the buffer it
    // is given (the first file it reads), every later read goes into their memory, where they
    // search in place.
    const later = intoKernel.filter(([path]) => path !== intoKernel[0]![0])
    expect(later.length).toBeGreaterThan(0)
    expect(later.every(([, inKernel]) => inKernel)).toBe(true)
    await one.close()
    // The local disk serves a read larger than its first read at once only into a buffer.
    const ws = localWorkspace(root, { searchThreads: 0 })
    const path = WorkspacePath.parse('c2.txt')
    expect(ws.readNow!(path, { offset: 0, length: 3 * MiB + 1 })).toBeUndefined()
    const into = new Uint8Array(4 * MiB)
    const read = ws.readNow!(path, { offset: 0, length: 4 * MiB }, into)!
    expect(read.buffer).toBe(into.buffer)
    expect(Buffer.from(read).equals(readFileSync(join(root, 'c2.txt')))).toBe(true)
    // As the whole-file scan asks: more than the buffer holds, so that a file too large for it
    // is declined unread; a smaller file is read into it.
    const whole = new Uint8Array(12 * MiB)
    const range = { offset: 0, length: 12 * MiB + 1 }
    expect(ws.readNow!(path, range, whole)?.buffer).toBe(whole.buffer)
    expect(ws.readNow!(WorkspacePath.parse('c3.txt'), range, whole)).toBeUndefined()
  })

  it('counts exactly across chunk boundaries of large files, one read buffer reused per chunk', async () => {
    // Every line starts with the literal, and some are longer than a chunk: a line's start left
    // at a chunk's end must survive the next chunk being read into the same memory.
    let seed = 7
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
    const MiB = 1024 * 1024
    let text = ''
    let lines = 0
    const add = (line: string) => {
      text += line + '\n'
      lines++
    }
    while (text.length < 3 * MiB - 5000) {
      const long = lines % 900 === 450
      const fill = String.fromCharCode(97 + next(26))
      add('needle' + fill.repeat(long ? MiB + next(700_000) : next(3000)))
    }
    // A literal found only in content mode's raw pass, across the chunk boundary at 3 MiB.
    add('needle' + 'x'.repeat(3 * MiB - 4 - text.length - 6) + 'MARKERq')
    while (text.length < 5.5 * MiB) add('needle' + 'y'.repeat(next(3000)))
    expect(text.indexOf('MARKERq')).toBe(3 * MiB - 4)
    writeFileSync(join(root, 'big.txt'), text)
    writeFileSync(join(root, 'big2.txt'), text)
    const one = await Agent.create().session(localWorkspace(root, { searchThreads: 0 }))
    // Without synchronous reads the files are streamed in chunks (as on S3 and in the browser);
    // with them they are read whole.
    const streamed = await Agent.create().session(
      localWorkspace(root, { searchThreads: 0, syncMetadata: false }),
    )
    for (const s of [one, session, streamed]) {
      const both = `big.txt:${lines}\nbig2.txt:${lines}`
      expect(await s.grep('needle', { output_mode: 'count' })).toBe(both)
      expect(await s.grep('NEEDLE', { output_mode: 'count', case_sensitive: false })).toBe(both)
      expect(await s.grep('^needle', { output_mode: 'count' })).toBe(both)
      // A lookahead is not line-local: content mode looks for the literal in the raw bytes first.
      const marker = (await s.grep('MARKER(?=q)', { output_mode: 'content' })).split('\n')
      expect(marker.map((l) => l.split(':').slice(0, 2).join(':'))).toEqual([
        `big.txt:${text.slice(0, text.indexOf('MARKERq')).split('\n').length}`,
        `big2.txt:${text.slice(0, text.indexOf('MARKERq')).split('\n').length}`,
      ])
    }
    await one.close()
    await streamed.close()
  })

  it('pages past file names a model could not send as a path', async () => {
    // Ordinary POSIX names that WorkspacePath.parse refuses in input: a page may end on one.
    const names = ['a\\b.txt', 'a\tb.txt', 'a\nb.txt', 'a%2ex.txt', 'C:x.txt', 'plain.txt']
    for (const name of names) writeFileSync(join(root, name), 'needle\nneedle\n')
    const one = await Agent.create().session(localWorkspace(root, { searchThreads: 0 }))
    const modes = [
      { mode: 'glob', query: '*' },
      ...['content', 'files_with_matches', 'count'].map((output_mode) => ({
        mode: 'grep',
        query: 'needle',
        output_mode,
      })),
    ]
    for (const s of [session, one])
      for (const args of modes)
        for (const sort of ['path', 'backend']) {
          const full = await s.tool('search', { ...args, sort, limit: 1000 })
          expect(full.exitCode).toBe(0)
          const pages: string[] = []
          let cursor: string | undefined
          do {
            const r = await s.tool('search', {
              ...args,
              sort,
              limit: 1,
              ...(cursor ? { cursor } : {}),
            })
            expect(r.exitCode, `${JSON.stringify(args)} ${sort}: ${r.output}`).toBe(0)
            pages.push(r.output.split('\n... (')[0]!)
            cursor = r.metadata?.next_cursor as string | undefined
          } while (cursor)
          expect(pages.length).toBeGreaterThanOrEqual(names.length)
          const joined = pages.join('\n').split('\n')
          const whole = full.output.split('\n')
          expect(sort === 'path' ? joined : [...joined].sort()).toEqual(
            sort === 'path' ? whole : [...whole].sort(),
          )
        }
    await one.close()
  })

  it('refuses a workspace root that does not exist', () => {
    expect(() => localWorkspace(join(root, 'missing'))).toThrow(/not an existing directory/)
  })
})

describe('listings reused while a directory is unchanged', () => {
  it('sees every change to a directory listed before, however its timestamps were set', async () => {
    for (const d of ['added', 'removed', 'replaced', 'renamed', 'still'])
      mkdirSync(join(root, d, 'sub'), { recursive: true })
    for (const d of ['added', 'removed', 'replaced', 'renamed', 'still'])
      writeFileSync(join(root, d, 'a.txt'), 'a\n')
    // Only a directory that has not changed for a while has its listing kept.
    await new Promise((resolve) => setTimeout(resolve, 2100))
    const ws = session.workspace
    const names = async (dir: string) =>
      (await ws.list(WorkspacePath.parse(dir))).entries.map((e) => `${e.name}:${e.kind}`)
    const before = listings.size
    for (const d of ['added', 'removed', 'replaced', 'renamed', 'still'])
      expect(await names(d)).toEqual(['a.txt:file', 'sub:directory'])
    expect(listings.size).toBe(before + 5)
    expect(await session.glob('**/*.txt')).toHaveLength(5)

    const old = statSync(join(root, 'added'), { bigint: true })
    writeFileSync(join(root, 'added', 'b.txt'), 'b\n')
    // Setting the mtime back to the nanosecond changes the ctime all the same.
    const ns = String(old.mtimeNs % 1_000_000_000n).padStart(9, '0')
    execFileSync('touch', [
      '-m',
      '-d',
      `@${old.mtimeNs / 1_000_000_000n}.${ns}`,
      join(root, 'added'),
    ])
    expect(statSync(join(root, 'added'), { bigint: true }).mtimeNs).toBe(old.mtimeNs)
    rmSync(join(root, 'removed', 'a.txt'))
    rmSync(join(root, 'replaced', 'a.txt'))
    mkdirSync(join(root, 'replaced', 'a.txt'))
    writeFileSync(join(root, 'replaced', 'a.txt', 'inner.txt'), 'x\n')
    renameSync(join(root, 'renamed', 'a.txt'), join(root, 'renamed', 'c.txt'))

    expect(await names('added')).toEqual(['a.txt:file', 'b.txt:file', 'sub:directory'])
    expect(await names('removed')).toEqual(['sub:directory'])
    expect(await names('replaced')).toEqual(['a.txt:directory', 'sub:directory'])
    expect(await names('renamed')).toEqual(['c.txt:file', 'sub:directory'])
    expect(await names('still')).toEqual(['a.txt:file', 'sub:directory'])
    expect((await session.glob('**/*.txt')).sort()).toEqual([
      'added/a.txt',
      'added/b.txt',
      'renamed/c.txt',
      'replaced/a.txt/inner.txt',
      'still/a.txt',
    ])
  })

  it('is not used when turned off', async () => {
    mkdirSync(join(root, 'd'))
    const ws = localWorkspace(root, { listingCache: false })
    const before = listings.size
    await ws.list(WorkspacePath.parse('d'))
    await ws.list(WorkspacePath.parse(''))
    expect(listings.size).toBe(before)
  })
})

describe('containment with cached directory paths', () => {
  it('notices a directory swapped for a symlink that leads outside', async () => {
    const base = mkdtempSync(join(tmpdir(), 'isoagent-swap-'))
    try {
      const ws = join(base, 'ws')
      const outside = join(base, 'outside')
      mkdirSync(join(ws, 'dir'), { recursive: true })
      mkdirSync(outside)
      writeFileSync(join(ws, 'dir', 'a.txt'), 'inside\n')
      writeFileSync(join(outside, 'a.txt'), 'secret\n')
      const workspace = localWorkspace(ws)
      const path = WorkspacePath.parse('dir/a.txt')
      // Listing and reading cache the directory's checked real path.
      await workspace.list(WorkspacePath.parse('dir'))
      expect(new TextDecoder().decode(await workspace.read(path))).toBe('inside\n')
      renameSync(join(ws, 'dir'), join(ws, 'dir-old'))
      symlinkSync(outside, join(ws, 'dir'))
      await new Promise((resolve) => setTimeout(resolve, 150))
      await expect(workspace.read(path)).rejects.toMatchObject({ code: 'path_escape' })
      await expect(workspace.list(WorkspacePath.parse('dir'))).rejects.toMatchObject({
        code: 'path_escape',
      })
      // A file swapped for a symlink is refused at once: it is opened without following links.
      writeFileSync(join(ws, 'b.txt'), 'b\n')
      await workspace.read(WorkspacePath.parse('b.txt'))
      rmSync(join(ws, 'b.txt'))
      symlinkSync(join(outside, 'a.txt'), join(ws, 'b.txt'))
      await expect(workspace.read(WorkspacePath.parse('b.txt'))).rejects.toMatchObject({
        code: 'path_escape',
      })
    } finally {
      rmSync(base, { recursive: true, force: true })
    }
  })

  it('never blocks on a FIFO', async () => {
    const fifo = join(root, 'pipe')
    execFileSync('mkfifo', [fifo])
    const ws = localWorkspace(root)
    await expect(ws.read(WorkspacePath.parse('pipe'))).rejects.toMatchObject({
      code: 'invalid_argument',
    })
  })
})
