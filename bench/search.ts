// Search: the `search` tool on a local workspace against the tools people reach for instead.
//
// 1. grep (literal, regex, case-insensitive literal, count, files_with_matches, content) against
//    ripgrep, spawned as a child process (its start-up cost included and printed separately), on
//    a generated tree of ≥ 30,000 files / ≥ 400 MB (bench/search-tree.ts) and on node_modules.
//    Goal (issue 33): ≤ 1.0× ripgrep on every node_modules row.
// 2. glob against tinyglobby and fast-glob, in process. Goal: ≤ 0.5× tinyglobby.
// 3. bm25 at its 16 MiB / 256-file cap: end to end, and `rankBm25` alone on 16 MiB of loaded
//    documents. Goal: ranking ≤ 150 ms.
//
// Every comparison needs a complete result on both sides: paged modes follow next_cursor to the
// end, and each result is checked against the peer's (totals, or the exact per-file set) once
// before timing. A mismatch is reported as such, never as a ratio.
//
// These are whole-command timings (hundreds of ms to tens of seconds), so this script times
// runs itself instead of using harness.compare(): WARM_RUNS untimed runs of every side first (they
// warm the page cache and the JIT; the first gives the results to check), then ROUNDS rounds that run each side
// once, alternating which goes first. Figures are medians over the rounds; the ratio is the
// median of the per-round ratios.
//
// Our side is the package as users get it, the tsc build in dist/ (`npm run bench:search` builds
// it first; a dist/ older than the sources stops the run). ISOAGENT_BENCH_SOURCES=1 runs the
// TypeScript sources through tsx instead, whose `__name` wrappers (esbuild keepNames) around
// functions made per call cost a few percent in content mode.
//
//   npm run bench:search          (SEARCH_BENCH_ROUNDS=n to change the number of rounds)
import { Buffer } from 'node:buffer'
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs'
import os from 'node:os'
import * as nodePath from 'node:path'
import { performance } from 'node:perf_hooks'
import v8 from 'node:v8'
import vm from 'node:vm'
import fastGlob from 'fast-glob'
import { glob as tinyGlob } from 'tinyglobby'
import type { ToolResult } from '../adapters/index.ts'
import { machineLine, median } from './harness.ts'
import { ensureSearchTree, RARE_LITERAL, SEARCH_TREE_DIR } from './search-tree.ts'
import { loadedFrom, ours } from './package-under-test.ts'

const REPO = nodePath.resolve(import.meta.dirname, '..')

const { Agent } = await ours<typeof import('../adapters/index.ts')>('adapters/index')
const { localWorkspace } =
  await ours<typeof import('../adapters/node/index.ts')>('adapters/node/index')
const { rankBm25 } = await ours<typeof import('../src/tools/search/bm25/bm25.ts')>(
  'src/tools/search/bm25/bm25',
)
const { BM25_LIMITS } =
  await ours<typeof import('../src/tools/search/tuning.ts')>('src/tools/search/tuning')
const { queryTerms } = await ours<typeof import('../src/tools/search/bm25/tokenize.ts')>(
  'src/tools/search/bm25/tokenize',
)

const ROUNDS = Number(process.env.SEARCH_BENCH_ROUNDS ?? 3)
/**
 * Untimed runs of every side before its timed rounds (the first also gives the results to check):
 * the page cache, the JIT and the caches of each side reach the state of a process that searches
 * the tree again and again. SEARCH_BENCH_WARM=n to change; up to 2026-12-01 it was 1.
 */
const WARM_RUNS = Math.max(1, Number(process.env.SEARCH_BENCH_WARM ?? 3))
/** Sections to run, e.g. SEARCH_BENCH_ONLY=glob,bm25 (default all three). */
const ONLY = new Set((process.env.SEARCH_BENCH_ONLY ?? 'grep,glob,bm25').split(','))
/** Trees for grep and glob, e.g. SEARCH_BENCH_TREES=node_modules (default both). */
const TREES = new Set((process.env.SEARCH_BENCH_TREES ?? 'generated,node_modules').split(','))
/** Goals: grep ≤ 1.0× ripgrep (node_modules rows), glob ≤ 0.5× tinyglobby, BM25 ranking ≤ 150 ms. */
const GOALS = { grepRatio: 1, globRatio: 0.5, bm25Ms: 150 } as const
const BM25_QUERY = 'retry request timeout handler 缓存'

/** rg flags for the same file set as ours: .gitignore without a .git, no parent or global rules. */
const RG_BASE = ['--no-config', '--no-ignore-parent', '--no-require-git']
/** HOME is an empty directory, so no global gitignore or config is read. */
const RG_ENV = {
  HOME: mkdtempSync(nodePath.join(os.tmpdir(), 'search-bench-home-')),
  PATH: process.env.PATH ?? '/usr/bin:/bin',
}

/**
 * SEARCH_BENCH_GC=1 runs a full GC before each timed run of an in-process side (ours, the glob
 * peers, bm25), as this script did up to 2026-12-01. It is off by default: such a GC leaves the
 * next run of either in-process side markedly slower (fresh pages, emptied caches) than it is in
 * a process in its steady state, while ripgrep runs in a process of its own either way.
 */
const collectGarbage: () => void = (() => {
  if (process.env.SEARCH_BENCH_GC !== '1') return () => {}
  v8.setFlagsFromString('--expose-gc')
  const gc: unknown = vm.runInNewContext('gc')
  return typeof gc === 'function' ? () => gc() : () => {}
})()

function fail(message: string): never {
  throw new Error(`search bench: ${message}`)
}

// ---------------------------------------------------------------------------------------------
// Running the sides

interface RgRun {
  ms: number
  stdout: string
}

function runRg(args: readonly string[], cwd: string): Promise<RgRun> {
  return new Promise((resolve, reject) => {
    const start = performance.now()
    const child = spawn('rg', [...RG_BASE, ...args], {
      cwd,
      env: RG_ENV,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const out: Buffer[] = []
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => {
      const ms = performance.now() - start
      // 0: matches, 1: none; 2 is an error, though rg also exits 2 after mere warnings.
      if (code === 0 || code === 1) resolve({ ms, stdout: Buffer.concat(out).toString('utf8') })
      else reject(new Error(`rg ${args.join(' ')} exited ${code}: ${err.slice(0, 500)}`))
    })
  })
}

/** `./a/b:3` → ['a/b', '3']; rg prints paths under `.` with a `./` prefix. */
function rgPath(path: string): string {
  return path.startsWith('./') ? path.slice(2) : path
}

type Session = Awaited<ReturnType<ReturnType<typeof Agent.create>['session']>>

interface OursRun {
  ms: number
  /** Output lines of all pages (cursor lines dropped). */
  lines: string[]
  pages: number
  /** Pages that stopped on the 30 s time budget. */
  timedOutPages: number
  /** Summary mode: the metadata totals. */
  matchingLines: number
  filesWithMatches: number
  filesScanned: number
  /** The last page still had a cursor (summary mode cannot follow one). */
  incomplete: boolean
}

/** The whole output of a result, fetched from its artifact when projection cut it. */
async function fullOutput(session: Session, result: ToolResult): Promise<string> {
  const evidence = result.metadata?.a3s_tool_result_evidence as
    { loss_mode: string; content_ref: string } | undefined
  if (evidence === undefined || evidence.loss_mode === 'none') return result.output
  const bytes = await session.getArtifact(evidence.content_ref)
  if (bytes === undefined) fail(`projected output without artifact (${evidence.content_ref})`)
  return new TextDecoder().decode(bytes)
}

/** Run one search to completion: every page, following next_cursor. */
async function runOurs(session: Session, args: Record<string, unknown>): Promise<OursRun> {
  collectGarbage()
  const start = performance.now()
  const pages: ToolResult[] = []
  let cursor: string | null = null
  let incomplete = false
  do {
    const result = await session.tool('search', cursor === null ? args : { ...args, cursor })
    if (result.exitCode !== 0) fail(`search ${JSON.stringify(args)} failed: ${result.output}`)
    pages.push(result)
    cursor = (result.metadata?.next_cursor as string | null | undefined) ?? null
    if (args.output_mode === 'summary' && cursor !== null) {
      incomplete = true
      cursor = null
    }
  } while (cursor !== null)
  const ms = performance.now() - start
  const lines: string[] = []
  for (const page of pages) {
    for (const line of (await fullOutput(session, page)).split('\n')) {
      if (line.startsWith('... (') && line.includes('cursor=')) continue
      if (line === '(no matches)' || line === '(no more matches)' || line === '(no files)') continue
      lines.push(line)
    }
  }
  const sum = (key: string) => pages.reduce((n, p) => n + Number(p.metadata?.[key] ?? 0), 0)
  return {
    ms,
    lines,
    pages: pages.length,
    timedOutPages: pages.filter((p) => p.metadata?.timed_out === true).length,
    matchingLines: sum('matching_lines'),
    filesWithMatches: sum('files_with_matches'),
    filesScanned: Number(pages[0]?.metadata?.files_scanned ?? 0),
    incomplete,
  }
}

// ---------------------------------------------------------------------------------------------
// Comparing results

/** What both sides found, in a comparable form, plus a one-line description. */
interface Found {
  key: string
  describe: string
}

function sortedKey(items: string[]): string {
  return [...items].sort().join('\n')
}

function countsFromLines(lines: string[], strip: boolean): Map<string, number> {
  const counts = new Map<string, number>()
  for (const line of lines) {
    if (line === '') continue
    const at = line.lastIndexOf(':')
    const path = strip ? rgPath(line.slice(0, at)) : line.slice(0, at)
    counts.set(path, Number(line.slice(at + 1)))
  }
  return counts
}

function totals(counts: Map<string, number>): Found {
  let lines = 0
  for (const n of counts.values()) lines += n
  return { key: `${lines}/${counts.size}`, describe: `${lines} lines in ${counts.size} files` }
}

function perFile(counts: Map<string, number>): Found {
  const t = totals(counts)
  return { key: sortedKey([...counts].map(([p, n]) => `${p}:${n}`)), describe: t.describe }
}

function pathSet(paths: string[]): Found {
  return { key: sortedKey(paths), describe: `${paths.length} files` }
}

function rgLines(stdout: string): string[] {
  return stdout.split('\n').filter((l) => l !== '')
}

// ---------------------------------------------------------------------------------------------
// Grep

interface GrepCase {
  name: string
  /** Arguments of our search (mode grep). */
  args: Record<string, unknown>
  /** rg arguments before the path `.`. */
  rg: string[]
  /** Both results in comparable form. */
  ours(run: OursRun): Found
  peer(stdout: string): Found
}

function grepCases(tree: 'generated' | 'node_modules'): GrepCase[] {
  const literal = tree === 'generated' ? 'requestId' : 'prototype'
  const regex = tree === 'generated' ? String.raw`fn\s+\w+Handler` : String.raw`function\s+\w+Error`
  const insensitive = tree === 'generated' ? 'handler' : 'error'
  const selective = tree === 'generated' ? RARE_LITERAL : 'deprecated'
  const summaryTotals = (run: OursRun): Found => ({
    key: `${run.matchingLines}/${run.filesWithMatches}`,
    describe: `${run.matchingLines} lines in ${run.filesWithMatches} files`,
  })
  const rgTotals = (stdout: string) => totals(countsFromLines(rgLines(stdout), true))
  return [
    {
      name: `literal \`${literal}\` (summary)`,
      args: { query: literal, output_mode: 'summary' },
      rg: ['-c', literal],
      ours: summaryTotals,
      peer: rgTotals,
    },
    {
      name: `regex \`${regex}\` (summary)`,
      args: { query: regex, output_mode: 'summary' },
      rg: ['-c', regex],
      ours: summaryTotals,
      peer: rgTotals,
    },
    {
      name: `case-insensitive \`${insensitive}\` (summary)`,
      args: { query: insensitive, case_sensitive: false, output_mode: 'summary' },
      rg: ['-c', '-i', insensitive],
      ours: summaryTotals,
      peer: rgTotals,
    },
    {
      name: `literal \`${literal}\` (count, paged)`,
      args: { query: literal, output_mode: 'count', limit: 1000 },
      rg: ['-c', literal],
      ours: (run) => perFile(countsFromLines(run.lines, false)),
      peer: (stdout) => perFile(countsFromLines(rgLines(stdout), true)),
    },
    {
      name: `literal \`${literal}\` (files_with_matches, paged)`,
      args: { query: literal, output_mode: 'files_with_matches', limit: 1000 },
      rg: ['-l', literal],
      ours: (run) => pathSet(run.lines),
      peer: (stdout) => pathSet(rgLines(stdout).map(rgPath)),
    },
    {
      name: `literal \`${selective}\` (content, paged)`,
      args: { query: selective, output_mode: 'content', limit: 1000 },
      rg: ['-n', '--no-heading', selective],
      ours: (run) => ({ key: sortedKey(run.lines), describe: `${run.lines.length} lines` }),
      // Our content lines drop the CR of a CRLF line end (display); rg prints it.
      peer: (stdout) => {
        const lines = rgLines(stdout).map((l) => rgPath(l).replace(/\r$/, ''))
        return { key: sortedKey(lines), describe: `${lines.length} lines` }
      },
    },
  ]
}

interface GrepRow {
  tree: string
  name: string
  rgCommand: string
  result: string
  /** Undefined when the results differ or ours is incomplete. */
  oursMs: number
  rgMs: number
  rgSingleMs: number
  /** Ours with `searchThreads: 0`: everything on the calling thread. */
  oneThreadMs: number
  ratio: number | undefined
  /** Ours on one thread against `rg -j1`. */
  ratioOneThread: number | undefined
  problem?: string
  pages: number
  timedOutPages: number
}

async function benchGrep(
  session: Session,
  oneThread: Session,
  root: string,
  tree: 'generated' | 'node_modules',
  rounds: number,
): Promise<GrepRow[]> {
  const rows: GrepRow[] = []
  for (const c of grepCases(tree)) {
    const args = { mode: 'grep', ...c.args }
    const single = ['-j1', ...c.rg]
    // Untimed first runs: warm the page cache and the JIT, and give the results to compare.
    const first = await runOurs(session, args)
    const firstOne = await runOurs(oneThread, args)
    const rgFirst = await runRg([...c.rg, '.'], root)
    for (let w = 1; w < WARM_RUNS; w++) {
      await runOurs(session, args)
      await runOurs(oneThread, args)
      await runRg([...c.rg, '.'], root)
      await runRg([...single, '.'], root)
    }
    const ours = c.ours(first)
    const peer = c.peer(rgFirst.stdout)
    let problem: string | undefined
    if (first.incomplete)
      problem = `ours INCOMPLETE: the 30 s time budget cut the summary (${first.filesScanned} files scanned)`
    else if (ours.key !== peer.key)
      problem = `RESULTS DIFFER: ours ${ours.describe}, rg ${peer.describe}`
    else if (c.ours(firstOne).key !== peer.key)
      problem = `RESULTS DIFFER: ours on one thread ${c.ours(firstOne).describe}, rg ${peer.describe}`
    const oursMs: number[] = []
    const rgMs: number[] = []
    const rgSingleMs: number[] = []
    const ratios: number[] = []
    const oneMs: number[] = []
    const ratiosOne: number[] = []
    let timedOutPages = first.timedOutPages
    for (let r = 0; r < rounds; r++) {
      let o: OursRun
      let p: RgRun
      if (r % 2 === 0) {
        o = await runOurs(session, args)
        p = await runRg([...c.rg, '.'], root)
      } else {
        p = await runRg([...c.rg, '.'], root)
        o = await runOurs(session, args)
      }
      const s = await runRg([...single, '.'], root)
      const one = await runOurs(oneThread, args)
      oneMs.push(one.ms)
      ratiosOne.push(one.ms / s.ms)
      timedOutPages = Math.max(timedOutPages, o.timedOutPages)
      if (o.incomplete && problem === undefined)
        problem = 'ours INCOMPLETE in a timed round: the 30 s time budget cut the summary'
      oursMs.push(o.ms)
      rgMs.push(p.ms)
      rgSingleMs.push(s.ms)
      ratios.push(o.ms / p.ms)
    }
    const row: GrepRow = {
      tree,
      name: c.name,
      rgCommand: `rg ${c.rg.join(' ')} .`,
      result: ours.describe,
      oursMs: median(oursMs),
      rgMs: median(rgMs),
      rgSingleMs: median(rgSingleMs),
      ratio: problem === undefined ? median(ratios) : undefined,
      oneThreadMs: median(oneMs),
      ratioOneThread: problem === undefined ? median(ratiosOne) : undefined,
      pages: first.pages,
      timedOutPages,
      ...(problem === undefined ? {} : { problem }),
    }
    rows.push(row)
    console.log(
      `  ${tree} · ${c.name}: ours ${fmtMs(row.oursMs)} (${row.pages} page${row.pages === 1 ? '' : 's'}), ` +
        `rg ${fmtMs(row.rgMs)} → ${fmtRatio(row.ratio)}; one thread ${fmtMs(row.oneThreadMs)}, ` +
        `rg -j1 ${fmtMs(row.rgSingleMs)} → ${fmtRatio(row.ratioOneThread)}` +
        (problem === undefined ? '' : `   !!! ${problem}`),
    )
  }
  return rows
}

// ---------------------------------------------------------------------------------------------
// Glob

interface GlobCase {
  name: string
  /** Our query (rg -g semantics: no `/` matches the name at any depth). */
  ours: string
  /** The same set for tinyglobby and fast-glob. */
  peer: string
}

interface GlobRow {
  tree: string
  name: string
  paths: number
  oursMs: number
  pages: number
  tinyMs: number
  fastMs: number
  ratioTiny: number | undefined
  ratioFast: number | undefined
  problem?: string
}

/** The generated tree's .gitignore rules, hand-translated: the peers do not read .gitignore. */
const GENERATED_IGNORES = ['**/build/**', '**/coverage/**', '**/*.log', 'tmp/**', '**/generated/**']

async function benchGlob(
  session: Session,
  root: string,
  tree: string,
  cases: GlobCase[],
  ignore: string[],
  rounds: number,
): Promise<GlobRow[]> {
  const rows: GlobRow[] = []
  // Peers: dotfiles neither matched nor entered, symlinks not followed (ours skips both).
  const tiny = (pattern: string) =>
    tinyGlob(pattern, { cwd: root, ignore, dot: false, followSymbolicLinks: false })
  const fast = (pattern: string) =>
    fastGlob(pattern, { cwd: root, ignore, dot: false, followSymbolicLinks: false })
  const timed = async <T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> => {
    collectGarbage()
    const start = performance.now()
    const value = await run()
    return { ms: performance.now() - start, value }
  }
  for (const c of cases) {
    const args = { mode: 'glob', query: c.ours, limit: 1000 }
    const first = await runOurs(session, args)
    const tinyFirst = await tiny(c.peer)
    const fastFirst = await fast(c.peer)
    for (let w = 1; w < WARM_RUNS; w++) {
      await runOurs(session, args)
      await tiny(c.peer)
      await fast(c.peer)
    }
    const ours = sortedKey(first.lines)
    let problem: string | undefined
    if (ours !== sortedKey(tinyFirst))
      problem = `RESULTS DIFFER: ours ${first.lines.length} paths, tinyglobby ${tinyFirst.length}`
    else if (ours !== sortedKey(fastFirst))
      problem = `RESULTS DIFFER: ours ${first.lines.length} paths, fast-glob ${fastFirst.length}`
    const oursMs: number[] = []
    const tinyMs: number[] = []
    const fastMs: number[] = []
    const ratiosTiny: number[] = []
    const ratiosFast: number[] = []
    for (let r = 0; r < rounds; r++) {
      const sides = [
        async () => oursMs.push((await runOurs(session, args)).ms),
        async () => tinyMs.push((await timed(() => tiny(c.peer))).ms),
        async () => fastMs.push((await timed(() => fast(c.peer))).ms),
      ]
      if (r % 2 === 1) sides.reverse()
      for (const side of sides) await side()
      ratiosTiny.push(oursMs[r]! / tinyMs[r]!)
      ratiosFast.push(oursMs[r]! / fastMs[r]!)
    }
    const row: GlobRow = {
      tree,
      name: c.peer === c.ours ? `\`${c.ours}\`` : `\`${c.ours}\` (peers: \`${c.peer}\`)`,
      paths: first.lines.length,
      oursMs: median(oursMs),
      pages: first.pages,
      tinyMs: median(tinyMs),
      fastMs: median(fastMs),
      ratioTiny: problem === undefined ? median(ratiosTiny) : undefined,
      ratioFast: problem === undefined ? median(ratiosFast) : undefined,
      ...(problem === undefined ? {} : { problem }),
    }
    rows.push(row)
    console.log(
      `  ${tree} · glob ${row.name}: ${row.paths} paths; ours ${fmtMs(row.oursMs)} (${row.pages} pages), ` +
        `tinyglobby ${fmtMs(row.tinyMs)}, fast-glob ${fmtMs(row.fastMs)} → ${fmtRatio(row.ratioTiny)}` +
        (problem === undefined ? '' : `   !!! ${problem}`),
    )
  }
  return rows
}

// ---------------------------------------------------------------------------------------------
// BM25

interface Bm25Row {
  name: string
  input: string
  ms: number
  runs: number
}

/** Files under `dir` in our walk order (depth first, siblings by code point), hidden skipped. */
function walkOrder(dir: string, rel = ''): string[] {
  const out: string[] = []
  const names = readdirSync(nodePath.join(dir, rel), { withFileTypes: true })
    .filter((e) => !e.name.startsWith('.'))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const e of names) {
    const path = rel === '' ? e.name : `${rel}/${e.name}`
    if (e.isDirectory()) out.push(...walkOrder(dir, path))
    else if (e.isFile()) out.push(path)
  }
  return out
}

async function benchBm25(session: Session, root: string, rounds: number): Promise<Bm25Row[]> {
  const rows: Bm25Row[] = []
  const endToEnd = async (name: string, args: Record<string, unknown>, n: number) => {
    const call = async () => {
      collectGarbage()
      const start = performance.now()
      const result = await session.tool('search', { mode: 'bm25', query: BM25_QUERY, ...args })
      const ms = performance.now() - start
      if (result.exitCode !== 0) fail(`bm25 failed: ${result.output}`)
      return { ms, result }
    }
    const { result } = await call()
    const m = result.metadata!
    const hits = (m.hits as unknown[]).length
    if (hits === 0) fail('bm25 found nothing')
    const times: number[] = []
    for (let r = 0; r < n; r++) times.push((await call()).ms)
    const input =
      `${m.files_scanned} files scanned, ${m.files_with_terms} with terms, ` +
      `${m.files_ranked} ranked = ${((m.bytes_ranked as number) / 2 ** 20).toFixed(2)} MiB; ${hits} hits` +
      ((m.warnings as string[]).length > 0 ? ` (caps: ${capsOf(m.warnings as string[])})` : '')
    rows.push({ name, input, ms: median(times), runs: n })
    console.log(`  bm25 · ${name}: ${fmtMs(median(times))} — ${input}`)
  }
  await endToEnd('end to end, `path: "vendor"`', { path: 'vendor' }, Math.max(rounds, 5))
  await endToEnd('end to end, whole tree', {}, Math.min(rounds, 2))

  // rankBm25 alone on the documents the tool ranks for `vendor`, chosen as it chooses them: files
  // in walk order, stably sorted by distinct query terms (most first), each cut at 512 KiB, until
  // 16 MiB or 256 files.
  const terms = [...new Set(queryTerms(BM25_QUERY))]
  const decoder = new TextDecoder()
  const candidates = walkOrder(nodePath.join(root, 'vendor'))
    .map((path) => {
      const bytes = readFileSync(nodePath.join(root, 'vendor', path))
      const lower = decoder.decode(bytes.subarray(0, BM25_LIMITS.maxFileBytes)).toLowerCase()
      return { path, bytes, distinct: terms.filter((t) => lower.includes(t)).length }
    })
    .filter((c) => c.distinct > 0)
    .sort((a, b) => b.distinct - a.distinct)
  const docs: { path: string; text: string }[] = []
  let total = 0
  for (const c of candidates.slice(0, BM25_LIMITS.maxFiles)) {
    const room = Math.min(BM25_LIMITS.maxFileBytes, BM25_LIMITS.maxTotalBytes - total)
    if (room <= 0) break
    const bytes = c.bytes.subarray(0, room)
    total += bytes.length
    docs.push({ path: `vendor/${c.path}`, text: decoder.decode(bytes) })
  }
  if (total !== BM25_LIMITS.maxTotalBytes) fail(`bm25 docs are ${total} bytes, not the cap`)
  const rank = () => rankBm25(docs, BM25_QUERY, { topK: 10, context: 2 })
  if (rank().length === 0) fail('rankBm25 found nothing')
  const times: number[] = []
  for (let r = 0; r < Math.max(rounds, 7); r++) {
    collectGarbage()
    const start = performance.now()
    rank()
    times.push(performance.now() - start)
  }
  const input = `${docs.length} docs, ${(total / 2 ** 20).toFixed(2)} MiB in memory`
  rows.push({
    name: '`rankBm25` alone (ranking at the cap)',
    input,
    ms: median(times),
    runs: times.length,
  })
  console.log(`  bm25 · rankBm25 alone: ${fmtMs(median(times))} — ${input}`)
  return rows
}

function capsOf(warnings: string[]): string {
  const caps: string[] = []
  if (warnings.some((w) => w.includes('total cap'))) caps.push('16 MiB total')
  if (warnings.some((w) => w.includes('only the'))) caps.push('256 files')
  if (warnings.some((w) => w.includes('were ranked on their first'))) caps.push('512 KiB per file')
  return caps.join(', ')
}

// ---------------------------------------------------------------------------------------------
// Reporting

function fmtMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms >= 100 ? 0 : 1)} ms`
}

function fmtRatio(ratio: number | undefined): string {
  if (ratio === undefined) return '—'
  return `${ratio >= 10 ? ratio.toFixed(1) : ratio.toFixed(2)}×`
}

function table(header: string[], body: string[][], left: number[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i]!.length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (left.includes(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`
  const rule = `| ${widths.map((w, i) => (left.includes(i) ? '-'.repeat(w) : '-'.repeat(w - 1) + ':')).join(' | ')} |`
  return [line(header), rule, ...body.map(line)].join('\n')
}

function grepTable(rows: GrepRow[]): string {
  return table(
    [
      'tree',
      'operation',
      'result',
      'ours',
      'rg',
      'ratio',
      'ours, 1 thread',
      'rg -j1',
      '1 thread vs -j1',
    ],
    rows.map((r) => [
      r.tree,
      r.name,
      r.problem ?? r.result,
      fmtMs(r.oursMs),
      fmtMs(r.rgMs),
      fmtRatio(r.ratio),
      fmtMs(r.oneThreadMs),
      fmtMs(r.rgSingleMs),
      fmtRatio(r.ratioOneThread),
    ]),
    [0, 1, 2],
  )
}

function globTable(rows: GlobRow[]): string {
  return table(
    ['tree', 'pattern', 'paths', 'ours', 'tinyglobby', 'ratio', 'fast-glob', 'ratio'],
    rows.map((r) => [
      r.tree,
      r.name,
      r.problem ?? String(r.paths),
      `${fmtMs(r.oursMs)} (${r.pages} pg)`,
      fmtMs(r.tinyMs),
      fmtRatio(r.ratioTiny),
      fmtMs(r.fastMs),
      fmtRatio(r.ratioFast),
    ]),
    [0, 1, 2],
  )
}

function bm25Table(rows: Bm25Row[]): string {
  return table(
    ['operation', 'input', 'ms', 'runs'],
    rows.map((r) => [r.name, r.input, r.ms.toFixed(0), String(r.runs)]),
    [0, 1],
  )
}

/** Files and bytes rg would search under `root` (binary files included). */
async function treeSize(root: string): Promise<{ files: number; bytes: number }> {
  const { stdout } = await runRg(['--files', '.'], root)
  const files = rgLines(stdout)
  let bytes = 0
  for (const f of files) bytes += statSync(nodePath.join(root, f)).size
  return { files: files.length, bytes }
}

async function rgStartCost(): Promise<number> {
  const empty = mkdtempSync(nodePath.join(os.tmpdir(), 'search-bench-empty-'))
  const times: number[] = []
  for (let i = 0; i < 21; i++) times.push((await runRg(['-c', 'zzz', '.'], empty)).ms)
  return median(times.slice(1))
}

async function main(): Promise<void> {
  const began = performance.now()
  const rgVersion = (await runRg(['--version'], REPO)).stdout.split('\n')[0]
  console.log(`# search bench · ${machineLine()} · ${rgVersion} · ${loadedFrom}`)
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} · ${ROUNDS} rounds`,
  )

  const tree = ensureSearchTree(REPO)
  if (tree.generatedMs !== undefined)
    console.log(`generated ${SEARCH_TREE_DIR} in ${fmtMs(tree.generatedMs)}`)
  else console.log(`reusing ${SEARCH_TREE_DIR} (generator v${tree.version})`)
  console.log(
    `  ${tree.files} files, ${(tree.bytes / 1e6).toFixed(0)} MB written; ` +
      `${tree.searchableFiles} text files, ${(tree.searchableBytes / 1e6).toFixed(0)} MB searchable`,
  )
  const nodeModules = nodePath.join(REPO, 'node_modules')
  const nm = await treeSize(nodeModules)
  console.log(`  node_modules: ${nm.files} files, ${(nm.bytes / 1e6).toFixed(0)} MB (rg --files)`)
  const startCost = await rgStartCost()
  console.log(`  rg process start (rg -c zzz in an empty dir, median of 20): ${fmtMs(startCost)}`)

  const generated = await Agent.create().session(localWorkspace(tree.root))
  const modules = await Agent.create().session(localWorkspace(nodeModules))
  const generatedOne = await Agent.create().session(localWorkspace(tree.root, { searchThreads: 0 }))
  const modulesOne = await Agent.create().session(localWorkspace(nodeModules, { searchThreads: 0 }))
  console.log(
    `  grep "ours": localWorkspace's default of ${Math.min(os.availableParallelism(), 4)} scan workers; ` +
      `"ours, 1 thread": searchThreads 0`,
  )

  console.log('\ngrep')
  const grepRows = !ONLY.has('grep')
    ? []
    : [
        ...(TREES.has('generated')
          ? await benchGrep(generated, generatedOne, tree.root, 'generated', ROUNDS)
          : []),
        ...(TREES.has('node_modules')
          ? await benchGrep(modules, modulesOne, nodeModules, 'node_modules', Math.max(ROUNDS, 5))
          : []),
      ]

  console.log('\nglob')
  const globRows = !ONLY.has('glob')
    ? []
    : [
        ...(!TREES.has('generated')
          ? []
          : await benchGlob(
              generated,
              tree.root,
              'generated',
              [
                { ours: '**/*.ts', peer: '**/*.ts' },
                { ours: '*.json', peer: '**/*.json' },
                { ours: 'packages/*/src/**/*.{ts,js}', peer: 'packages/*/src/**/*.{ts,js}' },
              ].map((c) => ({ name: c.ours, ...c })),
              GENERATED_IGNORES,
              Math.max(ROUNDS, 5),
            )),
        ...(!TREES.has('node_modules')
          ? []
          : await benchGlob(
              modules,
              nodeModules,
              'node_modules',
              [
                { ours: '**/*.d.ts', peer: '**/*.d.ts' },
                { ours: 'package.json', peer: '**/package.json' },
              ].map((c) => ({ name: c.ours, ...c })),
              [],
              Math.max(ROUNDS, 5),
            )),
      ]

  console.log('\nbm25')
  const bm25Rows = ONLY.has('bm25') ? await benchBm25(generated, tree.root, ROUNDS) : []

  console.log(`\n## Results · ${machineLine()} · ${rgVersion} · ${loadedFrom}`)
  console.log(`rg process start: ${fmtMs(startCost)} (included in every rg time)\n`)
  console.log(grepTable(grepRows))
  console.log()
  console.log(globTable(globRows))
  console.log()
  console.log(bm25Table(bm25Rows))
  const timedOut = grepRows.filter((r) => r.timedOutPages > 0)
  if (timedOut.length > 0)
    console.log(
      `\nPages cut by the 30 s time budget: ${timedOut.map((r) => `${r.tree} · ${r.name}`).join('; ')}`,
    )
  const worst = (ratios: (number | undefined)[]) =>
    Math.max(...ratios.filter((r): r is number => r !== undefined))
  const grepWorst = worst(grepRows.filter((r) => r.tree === 'node_modules').map((r) => r.ratio))
  const globWorst = worst(globRows.map((r) => r.ratioTiny))
  const rankMs = bm25Rows[bm25Rows.length - 1]?.ms ?? Number.NaN
  const shown = (ran: boolean, figure: string) => (ran ? figure : 'not run')
  console.log(
    `\ngoals: grep ≤ ${GOALS.grepRatio}× rg (node_modules): worst ${shown(grepRows.length > 0, fmtRatio(grepWorst))}` +
      ` · glob ≤ ${GOALS.globRatio}× tinyglobby: worst ${shown(globRows.length > 0, fmtRatio(globWorst))}` +
      ` · bm25 ranking ≤ ${GOALS.bm25Ms} ms: ${shown(bm25Rows.length > 0, `${rankMs.toFixed(0)} ms`)}`,
  )
  console.log(`(the whole benchmark took ${fmtMs(performance.now() - began)})`)
  const problems = [...grepRows, ...globRows].filter((r) => r.problem !== undefined)
  if (problems.length > 0) {
    console.log('\n!!! Some results differ from the peer or are incomplete; no ratio is given for:')
    for (const r of problems) console.log(`!!!   ${r.tree} · ${r.name}: ${r.problem}`)
    process.exitCode = 1
  }
}

await main()
