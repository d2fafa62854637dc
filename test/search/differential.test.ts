import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace, type Session } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import {
  parseContent,
  renderContent,
  RG,
  rgContent,
  rgCounts,
  rgPaths,
  runRg,
  search,
  searchAll,
} from './harness.ts'
import { generateTree, writeTree, type GeneratedTree } from './tree-gen.ts'

/*
 * Differential suite: our search tool against ripgrep on generated trees. ripgrep is the oracle
 * for what a tree walk sees (DESIGN.md, "What a tree walk sees"). Every case runs against a
 * local-disk workspace on the generated directory and a memory workspace holding the same files
 * (symlinks exist on disk only), so both backends are held to the same answers.
 *
 * Deliberate differences, each encoded where it applies:
 * - Line model: our tool displays a CRLF line without its `\r`, and `$` matches before `\r\n`
 *   (`.` does not match `\r`); that is ripgrep's `--crlf`, so grep cases run ripgrep with it and
 *   strip the `\r` it prints. Unlike `--crlf` (which refuses a `\r` in a pattern), our `\r` stays
 *   matchable (`\r$` finds CRLF lines): no case matches the `\r` itself. Generated text has no
 *   lone `\r` nor U+2028/U+2029, which JavaScript's `^`/`$`/`.` treat as line ends.
 * - Regex dialect: ours is JavaScript's (`u` flag), where `\b`, `\w`, `\d` are ASCII; ripgrep's
 *   are Unicode. Cases give ripgrep the ASCII spelling (`(?-u:\b)`, `[0-9]`) of the same class.
 * - `rg -g GLOB` whitelists override ignore files and hidden-ness (a gitignored `debug.log`
 *   matches `-g '*.log'`); our `include` and glob query only filter the walk. ripgrep's answer
 *   is therefore intersected with its plain walk (`rg --files`).
 * - The tree without `.git`: we respect `.gitignore` without a repository, which is
 *   `rg --no-require-git`.
 */

const rgFound = existsSync(RG)
if (!rgFound && process.env.CI) throw new Error(`ripgrep is required at ${RG}`)

interface TreeSpec {
  name: string
  seed: number
  files: number
  git: boolean
  /** Extra ripgrep flags that make its walk the one our tool promises. */
  rgWalk: string[]
}

const TREES: TreeSpec[] = [
  { name: 'repository (.git)', seed: 0x5eed, files: 220, git: true, rgWalk: [] },
  { name: 'no .git', seed: 0xbeef, files: 120, git: false, rgWalk: ['--no-require-git'] },
]

interface GrepCase {
  name: string
  query: string
  /** ripgrep's spelling of the same pattern, when the dialects differ. */
  rg?: string
  ignoreCase?: boolean
  include?: string
  path?: string
  /**
   * A regex-dialect case: content mode only (the other modes share the matcher), on the
   * repository tree only. Walk cases run every mode on both trees.
   */
  dialect?: true
  /** Glob syntax rather than walk: the repository tree is enough. */
  repoOnly?: true
  /** Also run `rg -l` and `rg -c` themselves (else they are derived from `rg -n`). */
  rgModes?: true
}

const GREP_CASES: GrepCase[] = [
  { name: 'literal', query: 'TODO', rgModes: true },
  { name: 'case-insensitive', query: 'error', ignoreCase: true, rgModes: true },
  { name: 'case-insensitive unicode', query: 'CAFÉ naïve', ignoreCase: true, dialect: true },
  { name: 'case-insensitive greek', query: 'σίσυφος', ignoreCase: true, dialect: true },
  { name: 'alternation', query: 'fooBar|bazQux', dialect: true },
  { name: 'anchor ^', query: '^import', dialect: true },
  { name: 'anchor $ (CRLF lines too)', query: '\\}$', dialect: true },
  { name: 'empty lines ^$', query: '^$', dialect: true },
  { name: 'every line ^', query: '^', dialect: true },
  { name: 'char class and counted repetition', query: '[0-9]{3,}', dialect: true },
  { name: 'digits \\d (ASCII)', query: '\\d{3}-\\d{4}', rg: '[0-9]{3}-[0-9]{4}', dialect: true },
  {
    name: 'word boundary \\b (ASCII)',
    query: '\\bcat\\b',
    rg: '(?-u:\\b)cat(?-u:\\b)',
    dialect: true,
  },
  { name: 'unicode letters \\p{Lu}\\p{Ll}+', query: '\\p{Lu}\\p{Ll}+ing', dialect: true },
  { name: 'unicode script Han', query: '\\p{Script=Han}{2}', dialect: true },
  { name: 'non-ASCII class (BOM stripped)', query: '[^\\x00-\\x7F]', dialect: true },
  { name: 'astral characters', query: '😀|🎉', dialect: true },
  { name: 'escaped metacharacters', query: 'a\\.b\\*c \\(d\\)', dialect: true },
  {
    name: 'escaped brackets and braces',
    query: '\\[e\\] \\{f\\} \\^g \\$h \\|i\\|',
    dialect: true,
  },
  { name: 'long line needle', query: 'needle_in_long_line', dialect: true },
  { name: 'lines of 300+ characters', query: '^.{300,}$', dialect: true },
  { name: 'nested repetition (linear-time engine)', query: '(TODO|FIXME)+:', dialect: true },
  { name: 'nested repetition with $ (linear-time engine)', query: '(end|\\})+;?$', dialect: true },
  { name: 'no match', query: 'zzz_no_such_thing', repoOnly: true },
  { name: 'include *.ts', query: 'TODO|fooBar', include: '*.ts', repoOnly: true },
  { name: 'include !*.md', query: 'TODO', include: '!*.md' },
  { name: 'include src/**', query: 'TODO|error', include: 'src/**', repoOnly: true },
  { name: 'include brace set', query: 'TODO', include: '*.{md,txt}', repoOnly: true },
  { name: 'include *.log (gitignored names)', query: 'TODO', include: '*.log', rgModes: true },
  { name: 'include !vendor (a directory)', query: 'TODO', include: '!vendor' },
  { name: 'path sub', query: 'TODO', path: 'sub' },
  { name: 'path pkg', query: 'TODO', path: 'pkg' },
  { name: 'path unicode', query: '\\p{L}', path: 'unicode', repoOnly: true },
  {
    name: 'path build (explicitly searched ignored dir)',
    query: 'TODO',
    path: 'build',
    rgModes: true,
  },
  { name: 'path nested-repo', query: 'TODO', path: 'nested-repo' },
  { name: 'path with include', query: 'TODO', path: 'sub', include: '*.tmp', repoOnly: true },
  {
    name: 'path with negated include naming it',
    query: 'TODO',
    path: 'vendor',
    include: '!vendor',
  },
]

/** Context cases: sparse and dense matches, CRLF line ends, a subdirectory. */
const CONTEXT_CASES: GrepCase[] = [
  { name: 'literal', query: 'TODO' },
  { name: 'alternation', query: 'fooBar|bazQux' },
  { name: 'anchor $', query: '\\}$' },
  { name: 'dense, overlapping context', query: '^\\}?$' },
  { name: 'path', query: 'TODO', path: 'sub' },
]

interface GlobCase {
  query: string
  path?: string
  /** An intended difference: ripgrep's answer → ours (the walk under `path` in path order). */
  adjust?: (rg: Set<string>, walk: string[]) => string[]
  /** Glob syntax rather than walk: the repository tree is enough. */
  repoOnly?: true
}

const GLOB_CASES: GlobCase[] = [
  { query: '**' },
  { query: '*.ts', repoOnly: true },
  { query: '*.{ts,js}', repoOnly: true },
  { query: '*.{md,txt,log}' },
  { query: 'src/**', repoOnly: true },
  { query: '**/*.md', repoOnly: true },
  { query: 'docs/**/*.txt', repoOnly: true },
  { query: '*/*.md', repoOnly: true },
  { query: '[a-c]*', repoOnly: true },
  // Classes negated with `!` (gitignore and ripgrep syntax) as well as `^`.
  { query: '[!a-c]*', repoOnly: true },
  { query: '[^a-m]*.md', repoOnly: true },
  { query: 'src/[!a-m]*', repoOnly: true },
  {
    // ripgrep's globset compiles `?` to "any byte" (a Unicode-less regex), so `?.txt` misses
    // `é.txt` (2 bytes) while `??.txt` matches it. Ours is the documented "any one character":
    // names whose single character is a non-ASCII BMP one are added to ripgrep's answer.
    query: '?.txt',
    repoOnly: true,
    adjust: (rg, walk) => walk.filter((p) => rg.has(p) || /(^|\/)[\u0080-\uffff]\.txt$/.test(p)),
  },
  { query: 'unicode/*', repoOnly: true },
  { query: '日本語.*', repoOnly: true },
  { query: '*.TMP', repoOnly: true },
  { query: '!*.md', repoOnly: true },
  { query: '!vendor' },
  { query: 'sub/**', path: 'sub' },
  { query: '*.tmp', path: 'sub' },
  { query: '**', path: 'pkg' },
  { query: '**', path: 'build' },
  { query: '!vendor', path: 'vendor' },
  { query: '!vendor', path: 'src' },
]

interface Fixture {
  spec: TreeSpec
  tree: GeneratedTree
  base: string
  root: string
  home: string
  rg(args: string[]): string
  /** ripgrep's plain walk under `path` (default root), in path order. */
  walk(path?: string): string[]
}

function makeFixture(spec: TreeSpec): Fixture {
  const tree = generateTree(spec)
  const { base, root } = writeTree(tree, 'isoagent-rgdiff-')
  const home = join(base, 'home')
  mkdirSync(home)
  const cache = new Map<string, string>()
  const rg = (args: string[]) => {
    const key = JSON.stringify(args)
    let out = cache.get(key)
    if (out === undefined) {
      out = runRg(root, home, [...spec.rgWalk, ...args])
      cache.set(key, out)
    }
    return out
  }
  const walk = (path?: string) =>
    rgPaths(rg(['--files', '--null', '--sort', 'path', ...(path ? [path] : [])]))
  return { spec, tree, base, root, home, rg, walk }
}

/** ripgrep's arguments for a grep case. */
function rgGrepArgs(c: GrepCase, mode: string[]): string[] {
  return [
    '--crlf',
    '--null',
    '--sort',
    'path',
    ...(c.ignoreCase ? ['-i'] : []),
    ...(c.include ? ['-g', c.include] : []),
    ...mode,
    '-e',
    c.rg ?? c.query,
    ...(c.path ? [c.path] : []),
  ]
}

function ourGrepArgs(c: GrepCase, outputMode: string): Record<string, unknown> {
  return {
    mode: 'grep',
    query: c.query,
    output_mode: outputMode,
    ...(c.ignoreCase ? { case_sensitive: false } : {}),
    ...(c.include ? { include: c.include } : {}),
    ...(c.path ? { path: c.path } : {}),
  }
}

const backends = [
  {
    name: 'local disk, scanned on worker threads',
    open: async (fx: Fixture) => {
      // Workers up before the first case, so every grep past its first 64 files uses them.
      const ws = localWorkspace(fx.root, { searchThreads: 2 })
      ws.scanner!.start()
      for (let i = 0; i < 400 && ws.scanner!.threads < 2; i++)
        await new Promise((r) => setTimeout(r, 50))
      expect(ws.scanner!.threads).toBe(2)
      return Agent.create().session(ws)
    },
  },
  {
    name: 'local disk, scanned on the calling thread',
    open: (fx: Fixture) => Agent.create().session(localWorkspace(fx.root, { searchThreads: 0 })),
  },
  {
    name: 'memory',
    open: (fx: Fixture) =>
      Agent.create().session(memoryWorkspace(Object.fromEntries(fx.tree.files))),
  },
]

for (const spec of TREES) {
  describe.skipIf(!rgFound)(`search vs ripgrep: ${spec.name}`, () => {
    let fx: Fixture
    beforeAll(() => {
      fx = makeFixture(spec)
    })
    afterAll(() => {
      if (fx) rmSync(fx.base, { recursive: true, force: true })
    })

    it('generates a tree that exercises the walk', () => {
      const all = fx.walk()
      expect(fx.tree.files.size).toBeGreaterThanOrEqual(spec.files)
      // Sanity of the oracle itself: the rules the skeleton sets up do what ripgrep documents.
      expect(all).toContain('keep.log')
      expect(all).not.toContain('debug.log')
      expect(all).not.toContain('root-only.txt')
      expect(all).toContain('sub/root-only.txt')
      expect(all).not.toContain('trace.log')
      expect(all).toContain('ignored-by-dot-ignore.md')
      expect(all).toContain('X.BAK')
      expect(all).toContain('nested-repo/debug.log')
      expect(all).not.toContain('nested-repo/only-dot-ignore.txt')
      expect(all).not.toContain('.env')
      expect(all.some((p) => p.startsWith('.hidden/') || p.startsWith('build/'))).toBe(false)
      expect(all.some((p) => p.includes('link') || p.startsWith('outside'))).toBe(false)
      expect(all).toContain('pkg/debug.log')
      expect(all).not.toContain('pkg/other.log')
      expect(all).toContain('pkg/logs/app.txt')
      expect(all).toContain('logs/today.txt')
      expect(all).toContain('scratch/s.txt')
      expect(all).toContain('pkg/.github/workflow.yml')
      expect(all).toContain('pkg/.keep-me')
      expect(all).not.toContain('pkg/.other')
      expect(all).toContain('vendor/lib.js')
      // .git/info/exclude applies only inside a repository.
      expect(all.includes('a.excluded')).toBe(!spec.git)
      expect(all.includes('nested-repo/excluded-in-nested.txt')).toBe(false)
      // Binary files are walked (and listed by --files) but never searched, though they hold TODO.
      const binaries = all.filter((p) => fx.tree.binary.has(p))
      expect(binaries.length).toBeGreaterThanOrEqual(3)
      const todo = rgPaths(fx.rg(rgGrepArgs(GREP_CASES[0]!, ['-l'])))
      expect(todo.filter((p) => fx.tree.binary.has(p))).toEqual([])
    })

    for (const backend of backends) {
      describe(backend.name, () => {
        let session: Session
        beforeAll(async () => {
          session = await backend.open(fx)
        })
        afterAll(async () => {
          await session?.close()
        })

        const walkSet = (path?: string) => new Set(fx.walk(path))

        describe('grep', () => {
          for (const c of GREP_CASES.filter((x) => spec.git || !(x.dialect || x.repoOnly))) {
            const modes = c.dialect
              ? 'content = rg -n'
              : 'files_with_matches = rg -l, count = rg -c, content = rg -n'
            it(`${c.name}: ${modes}`, async () => {
              const visible = walkSet(c.path)
              // content: (path, line, text) of every matching line
              const rgLines = rgContent(fx.rg(rgGrepArgs(c, ['-n', '--no-heading'])))
                .filter((l) => l !== undefined)
                .filter((l) => visible.has(l.path))
              const content = await searchAll(session, ourGrepArgs(c, 'content'))
              const ours = parseContent(content.lines, [...visible])
              expect(renderContent(ours)).toEqual(renderContent(rgLines))
              // Dialect cases differ in the pattern only: the other modes add nothing but time.
              if (c.dialect) return
              // `rg -l` and `rg -c` are `rg -n` grouped by file (checked on ripgrep itself where
              // the case says so; elsewhere derived, to spare a process start per mode).
              const rgFiles = [...new Set(rgLines.map((l) => l.path))]
              const rgCount = rgFiles.map(
                (p) => `${p}:${rgLines.filter((l) => l.path === p).length}`,
              )
              if (c.rgModes) {
                const l = rgPaths(fx.rg(rgGrepArgs(c, ['-l'])))
                expect(l.filter((p) => visible.has(p))).toEqual(rgFiles)
                const n = rgCounts(fx.rg(rgGrepArgs(c, ['-c'])))
                expect(n.filter((x) => visible.has(x.slice(0, x.lastIndexOf(':'))))).toEqual(
                  rgCount,
                )
              }
              const files = await searchAll(session, ourGrepArgs(c, 'files_with_matches'))
              expect(files.lines).toEqual(rgFiles)
              const counts = await searchAll(session, ourGrepArgs(c, 'count'))
              expect(counts.lines).toEqual(rgCount)
            })
          }

          it('summary totals equal rg -c, and every visible file is searched', async () => {
            for (const c of GREP_CASES.filter((x) => ['literal', 'path pkg'].includes(x.name))) {
              const visible = walkSet(c.path)
              const rgCount = rgCounts(fx.rg(rgGrepArgs(c, ['-c']))).filter((l) =>
                visible.has(l.slice(0, l.lastIndexOf(':'))),
              )
              const total = rgCount.reduce((n, l) => n + Number(l.slice(l.lastIndexOf(':') + 1)), 0)
              const summary = await search(session, ourGrepArgs(c, 'summary'))
              expect(summary.meta.matching_lines).toBe(total)
              expect(summary.meta.files_with_matches).toBe(rgCount.length)
              expect(summary.meta.files_scanned).toBe(visible.size)
              expect(summary.lines).toEqual([
                `${total} matching lines in ${rgCount.length} files (${visible.size} searched)`,
              ])
            }
          })

          it('content with context 2 equals rg -C 2 (separators included)', async () => {
            for (const c of CONTEXT_CASES) {
              const visible = walkSet(c.path)
              const expected = rgContent(fx.rg(rgGrepArgs(c, ['-n', '--no-heading', '-C', '2'])))
              const ours = await searchAll(session, { ...ourGrepArgs(c, 'content'), context: 2 })
              expect(renderContent(parseContent(ours.lines, [...visible])), c.name).toEqual(
                renderContent(expected),
              )
            }
          })

          it('files_skipped.binary counts the binary files the walk saw', async () => {
            const calls: { path?: string; output_mode: string }[] = [
              { output_mode: 'files_with_matches' },
              { output_mode: 'count' },
              { output_mode: 'content' },
              { output_mode: 'summary' },
              { output_mode: 'summary', path: 'src' },
            ]
            for (const call of calls) {
              const binaries = fx.walk(call.path).filter((p) => fx.tree.binary.has(p)).length
              const r = await search(session, {
                mode: 'grep',
                query: 'TODO',
                ...call,
                ...(call.output_mode === 'summary' ? {} : { limit: 1000 }),
              })
              expect(r.next, 'one page').toBeNull()
              const skipped = r.meta.files_skipped as { binary: number }
              expect(skipped.binary, JSON.stringify(call)).toBe(binaries)
            }
          })
        })

        describe('glob', () => {
          for (const c of GLOB_CASES.filter((x) => spec.git || !x.repoOnly)) {
            it(`${c.query}${c.path ? ` under ${c.path}` : ''} = rg --files -g`, async () => {
              const visible = walkSet(c.path)
              const rgAnswer = (
                c.query === '**'
                  ? fx.walk(c.path)
                  : rgPaths(
                      fx.rg([
                        '--files',
                        '--null',
                        '--sort',
                        'path',
                        '-g',
                        c.query,
                        ...(c.path ? [c.path] : []),
                      ]),
                    )
              ).filter((p) => visible.has(p))
              const expected = c.adjust ? c.adjust(new Set(rgAnswer), fx.walk(c.path)) : rgAnswer
              const ours = await searchAll(session, {
                mode: 'glob',
                query: c.query,
                ...(c.path ? { path: c.path } : {}),
              })
              expect(ours.lines).toEqual(expected)
              expect(ours.firstMeta!.paths).toEqual(expected.slice(0, 1000))
            })
          }
        })

        // Paging is walk-order machinery: the repository tree (every ignore rule, hidden
        // whitelists, nested repository) is enough, on both backends.
        if (spec.git)
          describe('paging', () => {
            // Result sets of 10-30 records (include narrows them), so limit 1 stays cheap.
            const md = '*.{md,txt,rs}'
            const pagedCases: { name: string; args: Record<string, unknown>; limits: number[] }[] =
              [
                {
                  name: 'files_with_matches',
                  args: {
                    mode: 'grep',
                    query: 'bazQux|phone',
                    output_mode: 'files_with_matches',
                    include: md,
                  },
                  limits: [1, 3, 7],
                },
                {
                  name: 'count',
                  args: { mode: 'grep', query: 'phone|STRASSE', output_mode: 'count', include: md },
                  limits: [1, 3, 7],
                },
                {
                  name: 'content',
                  args: { mode: 'grep', query: 'Widget', output_mode: 'content', include: md },
                  limits: [1, 3, 7],
                },
                {
                  name: 'content, pages ending inside files',
                  args: { mode: 'grep', query: '^import|needle', output_mode: 'content' },
                  limits: [7, 50],
                },
                {
                  name: 'content with context 2',
                  args: {
                    mode: 'grep',
                    query: 'bazQux|phone',
                    output_mode: 'content',
                    context: 2,
                    include: md,
                  },
                  limits: [1, 3, 7],
                },
                {
                  name: 'content with context 2, overlapping context',
                  args: {
                    mode: 'grep',
                    query: '^\\}?$',
                    output_mode: 'content',
                    context: 2,
                    include: md,
                  },
                  limits: [1, 3, 7],
                },
                { name: 'glob', args: { mode: 'glob', query: '*.{json,rs}' }, limits: [1, 3, 7] },
                { name: 'glob **', args: { mode: 'glob', query: '**' }, limits: [7] },
              ]
            for (const p of pagedCases) {
              it(`${p.name}: pages of ${p.limits.join(', ')} join to the single-call result`, async () => {
                const single = await search(session, { ...p.args, limit: 1000 })
                expect(single.next, 'the whole result fits one call').toBeNull()
                // Enough records that even the largest limit takes more than one page.
                expect(single.lines.length).toBeGreaterThan(Math.max(...p.limits))
                // Context runs may continue across a page boundary: compare records, not separators.
                const records = (lines: string[]) => lines.filter((l) => l !== '--')
                for (const limit of p.limits) {
                  const paged = await searchAll(session, p.args, limit)
                  // Every page but the last is full: `limit` matching lines, files or paths.
                  for (const [i, page] of paged.pages.entries()) {
                    const n =
                      p.args.output_mode === 'content'
                        ? parseContent(page, fx.walk()).filter((l) => l?.match).length
                        : page.length
                    if (i < paged.pages.length - 1) expect(n, `page ${i}`).toBe(limit)
                    else expect(n).toBeLessThanOrEqual(limit)
                  }
                  expect(records(paged.lines), `limit ${limit}`).toEqual(records(single.lines))
                }
              })
            }
          })
      })
    }
  })
}
