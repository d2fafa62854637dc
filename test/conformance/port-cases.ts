import * as fs from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { IsoagentError, WorkspacePath, type WorkspaceServices } from '../../adapters/index.ts'

/** What one port operation did, in a form both a workspace and node:fs can produce. */
export type Outcome = { ok: unknown } | { error: string }

const ERRNO: Record<string, string> = {
  ENOENT: 'not_found',
  EISDIR: 'is_directory',
  ENOTDIR: 'not_directory',
  ENOTEMPTY: 'not_empty',
}

/** A port operation: run against a workspace, and the same against plain node:fs in `root`. */
export interface Operation {
  label: string
  workspace(ws: WorkspaceServices): Promise<unknown>
  disk(root: string): unknown
}

const p = (path: string) => WorkspacePath.parse(path)
const enc = new TextEncoder()

function diskRange(root: string, path: string, offset: number, length?: number) {
  const data = fs.readFileSync(join(root, path))
  const start = Math.min(offset, data.length)
  return [
    ...data.subarray(
      start,
      length === undefined ? data.length : Math.min(data.length, start + length),
    ),
  ]
}

function diskList(root: string, path: string) {
  return fs
    .readdirSync(join(root, path), { withFileTypes: true })
    .map((d) => ({
      name: d.name,
      kind: d.isDirectory() ? 'directory' : d.isFile() ? 'file' : 'other',
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

function diskStat(root: string, path: string) {
  try {
    const s = fs.statSync(join(root, path))
    return { kind: s.isDirectory() ? 'directory' : 'file', size: s.isDirectory() ? 0 : s.size }
  } catch {
    return undefined
  }
}

function diskWrite(root: string, path: string, content: string) {
  const target = join(root, path)
  if (fs.existsSync(target) && fs.statSync(target).isDirectory()) {
    throw Object.assign(new Error('EISDIR'), { code: 'EISDIR' })
  }
  try {
    fs.writeFileSync(target, content)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    fs.mkdirSync(dirname(target), { recursive: true })
    fs.writeFileSync(target, content)
  }
  return null
}

export const operations: Operation[] = [
  {
    label: 'write nested',
    workspace: (ws) => ws.write(p('a/b/c.txt'), enc.encode('hello\nworld\n')).then(() => null),
    disk: (r) => diskWrite(r, 'a/b/c.txt', 'hello\nworld\n'),
  },
  {
    label: 'write top',
    workspace: (ws) => ws.write(p('z.txt'), enc.encode('zzz')).then(() => null),
    disk: (r) => diskWrite(r, 'z.txt', 'zzz'),
  },
  {
    label: 'write unicode name',
    workspace: (ws) => ws.write(p('a/é ñ.txt'), enc.encode('é')).then(() => null),
    disk: (r) => diskWrite(r, 'a/é ñ.txt', 'é'),
  },
  {
    label: 'write empty',
    workspace: (ws) => ws.write(p('a/empty'), new Uint8Array()).then(() => null),
    disk: (r) => diskWrite(r, 'a/empty', ''),
  },
  {
    label: 'write over directory',
    workspace: (ws) => ws.write(p('a/b'), enc.encode('x')).then(() => null),
    disk: (r) => diskWrite(r, 'a/b', 'x'),
  },
  {
    label: 'write under a file',
    workspace: (ws) => ws.write(p('z.txt/x'), enc.encode('x')).then(() => null),
    disk: (r) => diskWrite(r, 'z.txt/x', 'x'),
  },
  {
    label: 'read whole',
    workspace: async (ws) => [...(await ws.read(p('a/b/c.txt')))],
    disk: (r) => diskRange(r, 'a/b/c.txt', 0),
  },
  {
    label: 'read range',
    workspace: async (ws) => [...(await ws.read(p('a/b/c.txt'), { offset: 3, length: 4 }))],
    disk: (r) => diskRange(r, 'a/b/c.txt', 3, 4),
  },
  {
    label: 'read range past end',
    workspace: async (ws) => [...(await ws.read(p('a/b/c.txt'), { offset: 10, length: 100 }))],
    disk: (r) => diskRange(r, 'a/b/c.txt', 10, 100),
  },
  {
    label: 'read offset beyond EOF',
    workspace: async (ws) => [...(await ws.read(p('a/b/c.txt'), { offset: 1000 }))],
    disk: (r) => diskRange(r, 'a/b/c.txt', 1000),
  },
  {
    label: 'stream whole',
    workspace: async (ws) => [
      ...new Uint8Array(await new Response(await ws.readStream(p('a/b/c.txt'))).arrayBuffer()),
    ],
    disk: (r) => diskRange(r, 'a/b/c.txt', 0),
  },
  {
    label: 'stream range',
    workspace: async (ws) => [
      ...new Uint8Array(
        await new Response(
          await ws.readStream(p('a/b/c.txt'), { offset: 6, length: 3 }),
        ).arrayBuffer(),
      ),
    ],
    disk: (r) => diskRange(r, 'a/b/c.txt', 6, 3),
  },
  {
    label: 'read missing',
    workspace: (ws) => ws.read(p('nope')),
    disk: (r) => fs.readFileSync(join(r, 'nope')),
  },
  {
    label: 'read directory',
    workspace: (ws) => ws.read(p('a')),
    disk: (r) => fs.readFileSync(join(r, 'a')),
  },
  {
    label: 'stat file',
    workspace: async (ws) =>
      (({ kind, size }) => ({ kind, size }))((await ws.stat(p('a/b/c.txt')))!),
    disk: (r) => diskStat(r, 'a/b/c.txt'),
  },
  {
    label: 'stat dir',
    workspace: async (ws) => (({ kind, size }) => ({ kind, size }))((await ws.stat(p('a/b')))!),
    disk: (r) => diskStat(r, 'a/b'),
  },
  {
    label: 'stat missing',
    workspace: (ws) => ws.stat(p('a/missing')),
    disk: (r) => diskStat(r, 'a/missing'),
  },
  {
    label: 'list root',
    workspace: async (ws) =>
      (await ws.list(p(''))).entries.map(({ name, kind }) => ({ name, kind })),
    disk: (r) => diskList(r, ''),
  },
  {
    label: 'list dir',
    workspace: async (ws) =>
      (await ws.list(p('a'))).entries.map(({ name, kind }) => ({ name, kind })),
    disk: (r) => diskList(r, 'a'),
  },
  {
    label: 'list a file',
    workspace: (ws) => ws.list(p('z.txt')),
    disk: (r) => fs.readdirSync(join(r, 'z.txt')),
  },
  {
    label: 'list missing',
    workspace: (ws) => ws.list(p('nope')),
    disk: (r) => fs.readdirSync(join(r, 'nope')),
  },
  {
    label: 'mkdir nested',
    workspace: (ws) => ws.mkdir(p('m/n/o')).then(() => null),
    disk: (r) => (fs.mkdirSync(join(r, 'm/n/o'), { recursive: true }), null),
  },
  {
    label: 'rename file',
    workspace: (ws) => ws.rename(p('z.txt'), p('m/z2.txt')).then(() => null),
    disk: (r) => (fs.renameSync(join(r, 'z.txt'), join(r, 'm/z2.txt')), null),
  },
  {
    label: 'remove non-empty dir',
    workspace: (ws) => ws.remove(p('a/b')),
    disk: (r) => fs.rmdirSync(join(r, 'a/b')),
  },
  {
    label: 'remove file',
    workspace: (ws) => ws.remove(p('a/b/c.txt')).then(() => null),
    disk: (r) => (fs.unlinkSync(join(r, 'a/b/c.txt')), null),
  },
  {
    label: 'remove missing',
    workspace: (ws) => ws.remove(p('a/b/c.txt')),
    disk: (r) => fs.unlinkSync(join(r, 'a/b/c.txt')),
  },
  {
    label: 'remove dir recursive',
    workspace: (ws) => ws.remove(p('a'), { recursive: true }).then(() => null),
    disk: (r) => (fs.rmSync(join(r, 'a'), { recursive: true }), null),
  },
  {
    label: 'list after all',
    workspace: async (ws) =>
      (await ws.list(p(''))).entries.map(({ name, kind }) => ({ name, kind })),
    disk: (r) => diskList(r, ''),
  },
]

export async function outcomeOf(run: () => unknown): Promise<Outcome> {
  try {
    return { ok: await run() }
  } catch (error) {
    if (error instanceof IsoagentError) return { error: error.code }
    const code = (error as NodeJS.ErrnoException).code
    return { error: (code && ERRNO[code]) ?? `unexpected ${String(error)}` }
  }
}

/**
 * Port-level conformance: the same sequence of workspace operations, checked step by step
 * against what plain node:fs does in a temp directory (the oracle for real file-system
 * behaviour).
 */
export function portConformance(
  name: string,
  create: () => Promise<{ workspace: WorkspaceServices; cleanup(): Promise<void> }>,
) {
  describe(`port conformance against node:fs: ${name}`, () => {
    it('behaves like node:fs for writes, reads, ranges, listings, renames and removals', async () => {
      const { workspace, cleanup } = await create()
      const oracle = fs.mkdtempSync(join(tmpdir(), 'isoagent-oracle-'))
      try {
        for (const op of operations) {
          const expected = await outcomeOf(() => op.disk(oracle))
          const actual = await outcomeOf(() => op.workspace(workspace))
          expect(actual, op.label).toEqual(expected)
        }
      } finally {
        fs.rmSync(oracle, { recursive: true, force: true })
        await cleanup()
      }
    })

    it('pages listings exactly with after/limit', async () => {
      const { workspace, cleanup } = await create()
      try {
        for (let i = 0; i < 23; i++)
          await workspace.write(p(`d/f${String(i).padStart(2, '0')}`), new Uint8Array())
        const names: string[] = []
        let after: string | undefined
        for (;;) {
          const page = await workspace.list(p('d'), { after, limit: 5 })
          names.push(...page.entries.map((e) => e.name))
          if (page.next === undefined) break
          after = page.next
        }
        expect(names).toEqual(
          Array.from({ length: 23 }, (_, i) => `f${String(i).padStart(2, '0')}`),
        )
      } finally {
        await cleanup()
      }
    })

    it('serves at once (listNow, readNow), where it can, exactly what list and read give', async () => {
      const { workspace, cleanup } = await create()
      try {
        for (let i = 0; i < 7; i++)
          await workspace.write(p(`d/f${i}.txt`), enc.encode(`file ${i}\n`))
        await workspace.write(p('d/sub/deep.txt'), enc.encode('deep'))
        await workspace.write(p('top.txt'), enc.encode('0123456789'))
        const now = async <T>(run: () => T | undefined) => {
          const value = await outcomeOf(run)
          return 'ok' in value && value.ok === undefined ? undefined : value
        }
        let answered = 0
        for (const dir of ['', 'd', 'd/sub', 'missing', 'top.txt'])
          for (const options of [{}, { limit: 3 }, { after: 'f2.txt', limit: 2 }]) {
            const atOnce = await now(() => workspace.listNow?.(p(dir), options))
            if (atOnce === undefined) continue
            answered++
            expect(atOnce, `${dir} ${JSON.stringify(options)}`).toEqual(
              await outcomeOf(() => workspace.list(p(dir), options)),
            )
          }
        // With a buffer given (too small for some reads, large enough for others): the same
        // bytes; read into it, they start at its start.
        const buffers = [undefined, new Uint8Array(4), new Uint8Array(64)]
        for (const path of ['top.txt', 'd/f3.txt', 'd', 'missing.txt'])
          for (const range of [undefined, { offset: 2, length: 3 }, { offset: 50 }])
            for (const into of buffers) {
              const atOnce = await now(() => {
                const bytes = workspace.readNow?.(p(path), range, into)
                if (bytes !== undefined && into !== undefined && bytes.buffer === into.buffer)
                  expect(bytes.byteOffset).toBe(into.byteOffset)
                return bytes === undefined ? undefined : [...bytes]
              })
              if (atOnce === undefined) continue
              answered++
              expect(atOnce, `${path} ${JSON.stringify(range)} into ${into?.length}`).toEqual(
                await outcomeOf(async () => [...(await workspace.read(p(path), range))]),
              )
            }
        // Memory and local disk answer at once; S3 and the browser file system never do.
        if (workspace.listNow !== undefined) expect(answered).toBeGreaterThan(10)
      } finally {
        await cleanup()
      }
    })

    it('appends like node:fs appendFile, where it can, with preconditions and the new version', async () => {
      const { workspace, cleanup } = await create()
      const append = workspace.append?.bind(workspace)
      // Every workspace on a local disk appends in place; the others leave it out (callers
      // rewrite the file with write). The node:fs oracle is only made where there is an append
      // to compare (it cannot be made in a browser page).
      if (append === undefined) {
        expect(workspace.capabilities.localRoot).toBeUndefined()
        await cleanup()
        return
      }
      const oracle = fs.mkdtempSync(join(tmpdir(), 'isoagent-oracle-'))
      try {
        const steps: [string, string][] = [
          ['j/log.txt', 'one\n'],
          ['j/log.txt', 'two\n'],
          ['j/log.txt', ''],
          ['j/log.txt', 'é three'],
          ['j', 'x'],
          ['j/log.txt/under', 'x'],
          ['k/l/m.txt', 'deep'],
        ]
        for (const [path, text] of steps) {
          const expected = await outcomeOf(() => {
            const target = join(oracle, path)
            try {
              fs.appendFileSync(target, text)
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
              fs.mkdirSync(dirname(target), { recursive: true })
              fs.appendFileSync(target, text)
            }
            return null
          })
          const actual = await outcomeOf(() =>
            append(p(path), enc.encode(text), { durable: true }).then(() => null),
          )
          expect(actual, `append ${path}`).toEqual(expected)
        }
        for (const path of ['j/log.txt', 'k/l/m.txt'])
          expect([...(await workspace.read(p(path)))], path).toEqual([
            ...fs.readFileSync(join(oracle, path)),
          ])
        // The version it answers is the file's; a stale one, or ifAbsent, changes nothing.
        const before = (await workspace.stat(p('j/log.txt')))!.version
        const out = await append(p('j/log.txt'), enc.encode('!'), {
          precondition: { ifVersion: before },
        })
        expect(out.created).toBe(false)
        expect(out.version).toBe((await workspace.stat(p('j/log.txt')))!.version)
        expect(out.version).not.toBe(before)
        for (const precondition of [{ ifVersion: before }, { ifAbsent: true }])
          await expect(
            append(p('j/log.txt'), enc.encode('?'), { precondition }),
          ).rejects.toMatchObject({ code: 'version_conflict' })
        expect(new TextDecoder().decode(await workspace.read(p('j/log.txt')))).toBe(
          'one\ntwo\né three!',
        )
        const made = await append(p('n.txt'), enc.encode('new'), {
          precondition: { ifAbsent: true },
          durable: true,
        })
        expect(made).toEqual({
          created: true,
          version: (await workspace.stat(p('n.txt')))!.version,
        })
      } finally {
        fs.rmSync(oracle, { recursive: true, force: true })
        await cleanup()
      }
    })

    it('checks write preconditions atomically and changes nothing on conflict', async () => {
      const { workspace, cleanup } = await create()
      try {
        const first = await workspace.write(p('v.txt'), enc.encode('one'))
        expect(first.created).toBe(true)
        const version = (await workspace.stat(p('v.txt')))!.version
        await expect(
          workspace.write(p('v.txt'), enc.encode('x'), { precondition: { ifAbsent: true } }),
        ).rejects.toMatchObject({ code: 'version_conflict' })
        await workspace.write(p('v.txt'), enc.encode('two'), {
          precondition: { ifVersion: version },
        })
        await expect(
          workspace.write(p('v.txt'), enc.encode('three'), {
            precondition: { ifVersion: version },
          }),
        ).rejects.toMatchObject({ code: 'version_conflict' })
        expect(new TextDecoder().decode(await workspace.read(p('v.txt')))).toBe('two')
        expect((await workspace.stat(p('v.txt')))!.version).not.toBe(version)
      } finally {
        await cleanup()
      }
    })
  })
}
