import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  writeFileSync,
  createWriteStream,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  Agent,
  IsoagentError,
  memoryWorkspace,
  type Session,
  type WorkspaceServices,
} from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'

const roots: string[] = []
afterEach(() => {
  while (roots.length > 0) rmSync(roots.pop()!, { recursive: true, force: true })
})

/**
 * `memory, awaited`: a memory workspace without `listNow` and `readNow`, so every listing and
 * read is awaited, as on S3 and in the browser (the walk prefetches listings there).
 */
type Kind = 'memory' | 'memory, awaited' | 'local'

async function sessionOn(kind: Kind, files: Record<string, string | Uint8Array>): Promise<Session> {
  let ws: WorkspaceServices
  if (kind === 'memory') ws = memoryWorkspace(files)
  else if (kind === 'memory, awaited') {
    const { listNow: _list, readNow: _read, ...awaited } = memoryWorkspace(files)
    ws = awaited
  } else {
    const root = mkdtempSync(join(tmpdir(), 'isoagent-search-'))
    roots.push(root)
    for (const [p, c] of Object.entries(files)) {
      mkdirSync(join(root, p, '..'), { recursive: true })
      writeFileSync(join(root, p), c)
    }
    ws = localWorkspace(root)
  }
  return Agent.create().session(ws)
}

const tree = {
  'src/app.ts': 'import { x } from "./x"\nexport function handleRequest() {\n  return x\n}\n',
  'src/x.ts': 'export const x = 1\n// TODO: handle errors\n',
  'src/日本.txt': 'こんにちは世界\nhello\n',
  'docs/guide.md': '# Guide\nTODO write more\nhandle with care\n',
  'README.md': 'Readme\r\nTODO: crlf line\r\n',
  '.hidden/secret.ts': 'TODO hidden\n',
  '.env': 'TODO=1\n',
  'build/out.js': 'TODO built\n',
  '.gitignore': 'build/\n*.log\n',
  'debug.log': 'TODO log\n',
  'bin/tool.bin': new Uint8Array([0x54, 0x4f, 0x44, 0x4f, 0, 1, 2]),
}

describe.each(['memory', 'memory, awaited', 'local'] as const)('search on %s workspace', (kind) => {
  it('greps like ripgrep: ignores, hidden and binary files skipped, path order', async () => {
    const s = await sessionOn(kind, tree)
    const r = await s.tool('search', {
      mode: 'grep',
      query: 'TODO',
      output_mode: 'files_with_matches',
    })
    expect(r.exitCode, r.output).toBe(0)
    expect(r.output).toBe(['README.md', 'docs/guide.md', 'src/x.ts'].join('\n'))
    expect(r.metadata).toMatchObject({ files_with_matches: 3, files_skipped: { binary: 1 } })
    expect(
      (await s.tool('search', { mode: 'grep', query: 'TODO', output_mode: 'count' })).output,
    ).toBe('README.md:1\ndocs/guide.md:1\nsrc/x.ts:1')
    expect(await s.grep('TODO', { path: 'src' })).toBe('src/x.ts:2:// TODO: handle errors')
    expect(await s.grep('crlf line$')).toBe('README.md:2:TODO: crlf line')
    expect(
      await s.grep('HANDLE', { case_sensitive: false, output_mode: 'files_with_matches' }),
    ).toBe('docs/guide.md\nsrc/app.ts\nsrc/x.ts')
    expect(await s.grep('世界')).toBe('src/日本.txt:1:こんにちは世界')
    expect(await s.grep('\\p{Script=Hiragana}+', { output_mode: 'count' })).toBe('src/日本.txt:1')
    expect(await s.grep('TODO', { include: '*.md', output_mode: 'files_with_matches' })).toBe(
      'README.md\ndocs/guide.md',
    )
    expect(await s.grep('TODO', { include: '!*.md', output_mode: 'files_with_matches' })).toBe(
      'src/x.ts',
    )
    expect(await s.grep('TODO', { output_mode: 'summary' })).toBe(
      '3 matching lines in 3 files (6 searched)',
    )
    expect(await s.grep('nothing-matches-this')).toBe('(no matches)')
  })

  it('prints context like rg -C', async () => {
    const s = await sessionOn(kind, {
      'a.txt': ['l1', 'm2', 'l3', 'l4', 'l5', 'l6', 'm7', 'l8'].join('\n') + '\n',
    })
    expect(await s.grep('^m', { context: 1 })).toBe(
      [
        'a.txt-1-l1',
        'a.txt:2:m2',
        'a.txt-3-l3',
        '--',
        'a.txt-6-l6',
        'a.txt:7:m7',
        'a.txt-8-l8',
      ].join('\n'),
    )
    expect(await s.grep('^m', { context: 3 })).toBe(
      [
        'a.txt-1-l1',
        'a.txt:2:m2',
        'a.txt-3-l3',
        'a.txt-4-l4',
        'a.txt-5-l5',
        'a.txt-6-l6',
        'a.txt:7:m7',
        'a.txt-8-l8',
      ].join('\n'),
    )
  })

  it('pages content exactly, with context, without repeats', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => (i % 4 === 0 ? `match ${i}` : `other ${i}`))
    const s = await sessionOn(kind, {
      'a.txt': lines.join('\n'),
      'b.txt': lines.join('\n'),
      'c.txt': 'match c\n',
    })
    for (const context of [0, 2]) {
      const full = await s.grep('match', { context, limit: 1000 })
      const pages: string[] = []
      let cursor: string | undefined
      let calls = 0
      do {
        const r = await s.tool('search', {
          mode: 'grep',
          query: 'match',
          context,
          limit: 4,
          ...(cursor ? { cursor } : {}),
        })
        expect(r.exitCode, r.output).toBe(0)
        expect((r.metadata!.returned as number) <= 4).toBe(true)
        pages.push(...r.output.split('\n').filter((l) => !l.startsWith('... (')))
        cursor = (r.metadata!.next_cursor as string | null) ?? undefined
        calls++
      } while (cursor !== undefined)
      expect(calls).toBe(Math.ceil(31 / 4))
      const strip = (xs: string[]) => xs.filter((l) => l !== '--')
      expect(strip(pages)).toEqual(strip(full.split('\n')))
    }
  })

  it('pages files and globs with cursors; session.glob collects every page', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 25; i++) files[`d${i % 3}/f${String(i).padStart(2, '0')}.ts`] = 'needle\n'
    const s = await sessionOn(kind, files)
    const all = await s.glob('*.ts')
    expect(all).toHaveLength(25)
    expect(all).toEqual([...all].sort())
    const paged: string[] = []
    let cursor: string | undefined
    do {
      const r = await s.tool('search', {
        mode: 'grep',
        query: 'needle',
        output_mode: 'files_with_matches',
        limit: 7,
        ...(cursor ? { cursor } : {}),
      })
      paged.push(...r.output.split('\n').filter((l) => !l.startsWith('... (')))
      cursor = (r.metadata!.next_cursor as string | null) ?? undefined
    } while (cursor !== undefined)
    expect(paged).toEqual(all)
    expect(await s.glob('d1/*.{ts,js}')).toEqual(all.filter((p) => p.startsWith('d1/')))
    expect(await s.glob('**/f0[0-4].ts')).toEqual([
      'd0/f00.ts',
      'd0/f03.ts',
      'd1/f01.ts',
      'd1/f04.ts',
      'd2/f02.ts',
    ])
    expect(await s.glob('*.nothing')).toEqual([])
  })

  it('refuses bad input with typed errors', async () => {
    const s = await sessionOn(kind, tree)
    const first = await s.tool('search', {
      mode: 'grep',
      query: 'TODO',
      output_mode: 'files_with_matches',
      limit: 1,
    })
    const cursor = first.metadata!.next_cursor as string
    /** `cursor` with its position moved to `p`: a forged position. */
    const forged = (p: unknown) => {
      const fields = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as object
      return Buffer.from(JSON.stringify({ ...fields, p })).toString('base64url')
    }
    const malformed = ['../outside.txt', '/etc/passwd', 'a//b', './a', 'a/../../b', 'a\0b', 7]
    const cases: [unknown, string][] = [
      ...malformed.map((p): [unknown, string] => [
        {
          mode: 'grep',
          query: 'TODO',
          output_mode: 'files_with_matches',
          limit: 1,
          cursor: forged(p),
        },
        'invalid_argument',
      ]),
      [{ mode: 'grep', query: '' }, 'invalid_argument'],
      [{ mode: 'grep' }, 'invalid_argument'],
      [{ mode: 'regex', query: 'x' }, 'invalid_argument'],
      [{ mode: 'grep', query: '(' }, 'invalid_argument'],
      [{ mode: 'grep', query: 'a\nb' }, 'invalid_argument'],
      [{ mode: 'grep', query: 'x', limit: 1001 }, 'invalid_argument'],
      [{ mode: 'grep', query: 'x', limit: 0 }, 'invalid_argument'],
      [{ mode: 'grep', query: 'x', context: 9 }, 'invalid_argument'],
      [{ mode: 'grep', query: 'x', output_mode: 'count', context: 2 }, 'invalid_argument'],
      [{ mode: 'grep', query: 'x', output_mode: 'summary', limit: 5 }, 'invalid_argument'],
      [
        {
          mode: 'grep',
          query: 'TODO',
          output_mode: 'files_with_matches',
          limit: 1,
          cursor: 'garbage',
        },
        'invalid_argument',
      ],
      [
        { mode: 'grep', query: 'OTHER', output_mode: 'files_with_matches', limit: 1, cursor },
        'invalid_argument',
      ],
      [{ mode: 'grep', query: 'TODO', output_mode: 'count', limit: 1, cursor }, 'invalid_argument'],
      [{ mode: 'grep', query: 'x', path: '../outside' }, 'permission_denied'],
      [{ mode: 'grep', query: 'x', path: 'missing-dir' }, 'not_found'],
      [{ mode: 'glob', query: 'x', case_sensitive: true }, 'invalid_argument'],
      // A class or brace set left open, which ripgrep refuses too.
      [{ mode: 'glob', query: '[' }, 'invalid_argument'],
      [{ mode: 'glob', query: 'src/[a-z' }, 'invalid_argument'],
      [{ mode: 'glob', query: '*.{ts,js' }, 'invalid_argument'],
      [{ mode: 'grep', query: 'x', include: '{a,b' }, 'invalid_argument'],
      [{ mode: 'bm25', query: 'guide', include: '[!x' }, 'invalid_argument'],
      [{ mode: 'bm25', query: 'the a of', limit: 5 }, 'invalid_argument'],
      [{ mode: 'bm25', query: 'guide', limit: 26 }, 'invalid_argument'],
      [{ mode: 'bm25', query: 'guide', cursor }, 'invalid_argument'],
    ]
    for (const [args, type] of cases) {
      const r = await s.tool('search', args)
      expect(r.exitCode, JSON.stringify(args)).toBe(1)
      expect(r.errorKind?.type, JSON.stringify(args) + r.output).toBe(type)
    }
    expect(
      (await s.tool('search', { mode: 'grep', query: 'TODO', include: '*.nothing' })).output,
    ).toBe('(no matches)')
  })

  it('says once what makes a regular expression invalid', async () => {
    const s = await sessionOn(kind, tree)
    const r = await s.tool('search', { mode: 'grep', query: 'a(b' })
    expect(r.exitCode).toBe(1)
    expect(r.errorKind?.type).toBe('invalid_argument')
    expect(r.output).toContain('invalid regular expression /a(b/: Unterminated group')
    expect(r.output.match(/invalid regular expression/gi)).toHaveLength(1)
  })

  it('refuses a cursor forged to resume inside a file the search does not see', async () => {
    const files = {
      'a.txt': 'TODO a1\nTODO a2\n',
      'src/b.ts': 'TODO b1\nTODO b2\n',
      'src/c.ts': 'TODO c1\n',
      '.env': 'TODO=secret\n',
      '.gitignore': 'build/\n',
      'build/out.ts': 'TODO secret built\n',
    }
    const s = await sessionOn(kind, files)
    const decode = (c: string) => JSON.parse(Buffer.from(c, 'base64url').toString()) as object
    // From the start of the file, so a refusal, not the line position, keeps its lines out.
    const move = (c: string, p: string) =>
      Buffer.from(JSON.stringify({ ...decode(c), p, l: 0, s: 0 })).toString('base64url')
    const ask = async (on: Session, extra: object, cursor?: string) => {
      const args = { mode: 'grep', query: 'TODO', output_mode: 'content', limit: 1, ...extra }
      return on.tool('search', { ...args, ...(cursor ? { cursor } : {}) })
    }
    const inside = (await ask(s, {})).metadata!.next_cursor as string
    expect(decode(inside)).toMatchObject({ p: 'a.txt', i: 1 })
    const ts = (await ask(s, { include: '*.ts' })).metadata!.next_cursor as string
    expect(decode(ts)).toMatchObject({ p: 'src/b.ts', i: 1 })
    const inSrc = (await ask(s, { path: 'src' })).metadata!.next_cursor as string
    expect(decode(inSrc)).toMatchObject({ p: 'src/b.ts', i: 1 })
    const refused: [object, string][] = [
      [{}, move(inside, '.env')],
      [{}, move(inside, 'build/out.ts')],
      [{ include: '*.ts' }, move(ts, 'a.txt')],
      [{ include: '*.ts' }, move(ts, 'build/out.ts')],
      [{ path: 'src' }, move(inSrc, 'a.txt')],
    ]
    for (const [extra, cursor] of refused) {
      const r = await ask(s, extra, cursor)
      expect(r.exitCode, JSON.stringify(decode(cursor))).toBe(1)
      expect(r.errorKind?.type).toBe('invalid_argument')
      expect(r.output).not.toContain('secret')
      expect(r.output).not.toContain('a1')
    }
    // A file gone since, or a directory now, is passed over (as a file that vanishes mid-walk
    // is), and the walk goes on after it.
    for (const p of ['gone.txt', 'src']) {
      const r = await ask(s, {}, move(inside, p))
      expect(r.exitCode, p).toBe(0)
      expect(r.output.split('\n')[0], p).toBe('src/b.ts:1:TODO b1')
      expect(r.metadata!.files_skipped).toMatchObject({ vanished: 1 })
    }
    // The cursors the search gave work in a session that did not make them.
    const other = await sessionOn(kind, files)
    expect((await ask(other, {}, inside)).output.split('\n')[0]).toBe('a.txt:2:TODO a2')
    expect((await ask(other, { include: '*.ts' }, ts)).output.split('\n')[0]).toBe(
      'src/b.ts:2:TODO b2',
    )
    expect((await ask(other, { path: 'src' }, inSrc)).output.split('\n')[0]).toBe(
      'src/b.ts:2:TODO b2',
    )
  })

  it('bounds catastrophic patterns with a linear-time engine', async () => {
    const s = await sessionOn(kind, { 'evil.txt': 'a'.repeat(30_000) + '!\n' + 'aaa\n' })
    const started = Date.now()
    const r = await s.tool('search', { mode: 'grep', query: '(a+)+$', output_mode: 'count' })
    expect(r.output).toBe('evil.txt:1')
    expect(r.metadata).toMatchObject({ engine: 're2' })
    expect(Date.now() - started).toBeLessThan(10_000)
    const backref = await s.tool('search', { mode: 'grep', query: '(a+)+\\1' })
    expect(backref.errorKind?.type).toBe('invalid_argument')
    expect(backref.output).toContain('exponential')
  })

  it('ranks with BM25: the obvious file first, in English and Chinese', async () => {
    const s = await sessionOn(kind, {
      'src/config.ts':
        'export function parseConfigFile(path: string) {\n  // parse the config file\n  return readConfig(path)\n}\n',
      'src/server.ts': 'export function startServer(port: number) {\n  listen(port)\n}\n',
      'docs/pool.md': '# 数据库连接池\n连接池管理数据库连接，复用连接以减少开销。\n',
      'docs/cache.md': '# 缓存\n缓存用于加速读取。\n',
    })
    const en = await s.tool('search', { mode: 'bm25', query: 'parse config file' })
    expect(en.exitCode, en.output).toBe(0)
    expect((en.metadata!.hits as { path: string }[])[0]!.path).toBe('src/config.ts')
    expect(en.metadata!.source_anchors).toContainEqual({
      path: 'src/config.ts',
      start_line: 1,
      end_line: 4,
    })
    const zh = await s.tool('search', { mode: 'bm25', query: '数据库连接池' })
    expect((zh.metadata!.hits as { path: string }[])[0]!.path).toBe('docs/pool.md')
  })

  it('finds terms in any case, also behind signs that lower-case into ASCII', async () => {
    const s = await sessionOn(kind, {
      'a.md': 'The \u212AEY RING holds every key.\n',
      'b.md': 'APİ gateway\n',
      'c.md': 'REQUEST handler\n',
      'd.md': 'nothing here\n',
    })
    for (const [query, path] of [
      ['key', 'a.md'],
      ['request', 'c.md'],
    ]) {
      const r = await s.tool('search', { mode: 'bm25', query })
      expect(r.exitCode, r.output).toBe(0)
      expect(r.metadata!.files_with_terms, query).toBe(1)
      expect((r.metadata!.hits as { path: string }[])[0]?.path, query).toBe(path)
    }
    // "APİ" lower-cases to "api̇": a candidate (the text holds "api"), though no token equals it.
    const r = await s.tool('search', { mode: 'bm25', query: 'api' })
    expect(r.metadata!.files_with_terms).toBe(1)
  })
})

describe('search over a backend that fails underneath', () => {
  // At once (listNow, readNow) and through promises only: the walk takes either path.
  it.each([true, false])(
    'counts directories it cannot list and files that vanish mid-walk, and goes on (at once: %s)',
    async (atOnce) => {
      const inner = memoryWorkspace({
        'a.txt': 'needle\n',
        'locked/b.txt': 'needle\n',
        'gone.txt': 'needle\n',
        'z.txt': 'needle\n',
      })
      const locked = () => new IsoagentError('permission_denied', 'locked: permission denied')
      const gone = () => new IsoagentError('not_found', 'gone.txt vanished')
      const flaky: WorkspaceServices = {
        ...inner,
        async list(path, options) {
          if (path === 'locked') throw locked()
          return inner.list(path, options)
        },
        async read(path, range) {
          if (path === 'gone.txt') throw gone()
          return inner.read(path, range)
        },
        listNow: atOnce
          ? (path, options) => {
              if (path === 'locked') throw locked()
              return inner.listNow!(path, options)
            }
          : undefined,
        readNow: atOnce
          ? (path, range) => {
              if (path === 'gone.txt') throw gone()
              return inner.readNow!(path, range)
            }
          : undefined,
      }
      const s = await Agent.create().session(flaky)
      const r = await s.tool('search', {
        mode: 'grep',
        query: 'needle',
        output_mode: 'files_with_matches',
      })
      expect(r.exitCode, r.output).toBe(0)
      expect(r.output).toBe('a.txt\nz.txt')
      expect(r.metadata).toMatchObject({ files_skipped: { unreadable_dirs: 1, vanished: 1 } })
    },
  )
})

describe('search on local disk only', () => {
  it('skips unreadable directories and counts them', async () => {
    const root = mkdtempSync(join(tmpdir(), 'isoagent-search-'))
    roots.push(root)
    mkdirSync(join(root, 'locked'))
    writeFileSync(join(root, 'locked/a.txt'), 'needle\n')
    writeFileSync(join(root, 'b.txt'), 'needle\n')
    chmodSync(join(root, 'locked'), 0)
    const s = await Agent.create().session(localWorkspace(root))
    const r = await s.tool('search', {
      mode: 'grep',
      query: 'needle',
      output_mode: 'files_with_matches',
    })
    chmodSync(join(root, 'locked'), 0o755)
    expect(r.exitCode).toBe(0)
    if (process.getuid?.() === 0) expect(r.output).toBe('b.txt\nlocked/a.txt')
    else {
      expect(r.output).toBe('b.txt')
      expect(r.metadata).toMatchObject({ files_skipped: { unreadable_dirs: 1 } })
    }
  })

  it('streams a 1 GB file without holding it as one string', async () => {
    const root = mkdtempSync(join(tmpdir(), 'isoagent-search-'))
    roots.push(root)
    const out = createWriteStream(join(root, 'huge.log'))
    const block = 'x'.repeat(1023) + '\n'
    const chunk = block.repeat(1024)
    for (let i = 0; i < 1024; i++) {
      if (
        !out.write(
          i === 1000
            ? chunk.slice(0, -1024) + 'needle in the haystack\n'.padStart(1024, 'y')
            : chunk,
        )
      ) {
        await new Promise<void>((r) => out.once('drain', () => r()))
      }
    }
    await new Promise<void>((r) => out.end(() => r()))
    const s = await Agent.create().session(localWorkspace(root))
    const line = await s.grep('needle in the')
    expect(line.startsWith(`huge.log:${1000 * 1024 + 1024}:`)).toBe(true)
  }, 120_000)
})
