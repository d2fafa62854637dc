// Git: the `git` tool on a local workspace against the git CLI itself, on a generated repository
// of 2,000 commits and 5,000 files (built once under .bench-data/ with `git fast-import`).
//
// Operations: `status` (porcelain, untracked files listed one by one) and `log` of 100 commits.
// Ours runs twice: through the CLI backend (what localWorkspace uses when git is installed) and
// through the isomorphic-git backend (what serves git where no CLI exists). The peer is the git
// CLI spawned with the same arguments a person would type (`git status --porcelain -b -uall`,
// `git log -n 100`), its start-up included. Before timing, each of our outputs is checked to equal
// the peer's byte for byte; a mismatch is reported as such, never as a ratio.
//
// Whole-command timings: an untimed first run of every side, then ROUNDS rounds that run each side
// once, alternating which goes first. Figures are medians; the ratio is the median of per-round
// ratios.
//
// The browser row (bench/git-browser.ts) imports the same repository into lightning-fs in
// headless Chromium and times status and log in the page (GIT_BENCH_BROWSER=0 leaves it out).
//
//   npx tsx bench/git.ts          (GIT_BENCH_ROUNDS=n to change the number of rounds)
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import * as nodePath from 'node:path'
import { performance } from 'node:perf_hooks'
import { Agent, type Session } from '../adapters/index.ts'
import { localWorkspace } from '../adapters/node/index.ts'
import { browserRows } from './git-browser.ts'
import { machineLine, median } from './harness.ts'

const REPO = nodePath.resolve(import.meta.dirname, '..')
const DATA = nodePath.join(REPO, '.bench-data', 'git-repo')
const ROUNDS = Number(process.env.GIT_BENCH_ROUNDS ?? 5)
const COMMITS = 2000
const FILES = 5000
const MARKER = nodePath.join(DATA, '.git', 'isoagent-bench-v1')

const ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  LC_ALL: 'C',
}

function gitSync(args: string[], input?: string | Buffer): string {
  return execFileSync('git', args, {
    cwd: DATA,
    env: ENV,
    input,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  })
}

const filePath = (i: number) =>
  `src/m${String(Math.floor(i / 250)).padStart(2, '0')}/d${String(Math.floor(i / 50) % 5)}/file${String(i).padStart(4, '0')}.ts`

function fileText(i: number, version: number): string {
  const lines = [`// file ${i}, version ${version}`]
  for (let k = 0; k < 20; k++)
    lines.push(`export const v${k} = ${(i * 31 + k * 7 + version) % 1000}`)
  return `${lines.join('\n')}\n`
}

/** Build the repository with fast-import (once; reused while the marker is there). */
function ensureRepo(): void {
  if (existsSync(MARKER)) return
  rmSync(DATA, { recursive: true, force: true })
  mkdirSync(DATA, { recursive: true })
  gitSync(['init', '-q', '--initial-branch=main'])
  const chunks: Buffer[] = []
  const push = (text: string) => chunks.push(Buffer.from(text, 'utf8'))
  const data = (text: string) => {
    const bytes = Buffer.from(text, 'utf8')
    push(`data ${bytes.length}\n`)
    chunks.push(bytes)
    push('\n')
  }
  const versions = new Array<number>(FILES).fill(0)
  let time = 1_600_000_000
  for (let c = 1; c <= COMMITS; c++) {
    time += 600
    push(`commit refs/heads/main\nmark :${c}\n`)
    push(`author Bench Author <bench@example.com> ${time} +0000\n`)
    push(`committer Bench Author <bench@example.com> ${time} +0000\n`)
    data(`Commit ${c}\n\nTouches a few files of the generated tree.\n`)
    if (c > 1) push(`from :${c - 1}\n`)
    const touched =
      c === 1
        ? Array.from({ length: FILES }, (_, i) => i)
        : [c % FILES, (c * 7) % FILES, (c * 13 + 5) % FILES]
    for (const i of touched) {
      if (c > 1) versions[i]!++
      push(`M 100644 inline ${filePath(i)}\n`)
      data(fileText(i, versions[i]!))
    }
    push('\n')
  }
  gitSync(['fast-import', '--quiet'], Buffer.concat(chunks))
  gitSync(['checkout', '-q', '-f', 'main'])
  // A working tree with some local changes: 20 modified files, 10 untracked ones.
  for (let k = 0; k < 20; k++) {
    const i = (k * 241) % FILES
    writeFileSync(nodePath.join(DATA, filePath(i)), fileText(i, 9999))
  }
  for (let k = 0; k < 10; k++) writeFileSync(nodePath.join(DATA, `notes-${k}.txt`), `note ${k}\n`)
  writeFileSync(MARKER, 'generated\n')
}

function runGit(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: DATA, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(out).toString('utf8'))
        : reject(new Error(`git ${args[0]} exit ${code}`)),
    )
  })
}

async function timed(op: () => Promise<unknown>): Promise<number> {
  const start = performance.now()
  await op()
  return performance.now() - start
}

interface Row {
  operation: string
  backend: string
  oursMs: number
  peerMs: number
  ratio: number
  range: [number, number]
}

async function compare(
  operation: string,
  backend: string,
  ours: () => Promise<string>,
  peer: () => Promise<string>,
  rounds: number,
): Promise<Row> {
  const [a, b] = [await ours(), await peer()]
  if (a !== b) {
    const at = [...a].findIndex((ch, i) => ch !== b[i])
    throw new Error(
      `${operation} (${backend}): output differs from git's at char ${at}:\n${a.slice(at - 80, at + 80)}\n---\n${b.slice(at - 80, at + 80)}`,
    )
  }
  const oursMs: number[] = []
  const peerMs: number[] = []
  const ratios: number[] = []
  for (let r = 0; r < rounds; r++) {
    let o: number
    let p: number
    if (r % 2 === 0) {
      o = await timed(ours)
      p = await timed(peer)
    } else {
      p = await timed(peer)
      o = await timed(ours)
    }
    oursMs.push(o)
    peerMs.push(p)
    ratios.push(o / p)
  }
  return {
    operation,
    backend,
    oursMs: median(oursMs),
    peerMs: median(peerMs),
    ratio: median(ratios),
    range: [Math.min(...ratios), Math.max(...ratios)],
  }
}

async function sessionFor(mode: 'cli' | 'isomorphic'): Promise<Session> {
  return Agent.create().session(localWorkspace(DATA, { git: mode }))
}

async function main(): Promise<void> {
  const t0 = performance.now()
  ensureRepo()
  const built = performance.now() - t0
  const commits = Number(gitSync(['rev-list', '--count', 'HEAD']).trim())
  const files = gitSync(['ls-files']).split('\n').filter(Boolean).length
  console.log(`# git bench\n${machineLine()}`)
  console.log(
    `repository: ${commits} commits, ${files} files (${built > 1000 ? `built in ${(built / 1000).toFixed(1)} s` : 'reused'})`,
  )

  const rows: Row[] = []
  for (const mode of ['cli', 'isomorphic'] as const) {
    const session = await sessionFor(mode)
    const backend = mode === 'cli' ? 'git CLI' : 'isomorphic-git'
    const rounds = mode === 'cli' ? ROUNDS : Math.max(3, Math.ceil(ROUNDS / 2))
    const tool = async (command: string, args: Record<string, unknown>) => {
      const result = await session.git(command, args)
      if (result.exitCode !== 0) throw new Error(`git ${command} failed: ${result.output}`)
      return result.output
    }
    rows.push(
      await compare(
        'status',
        backend,
        async () => `${await tool('status', { limit: 200 })}\n`,
        () => runGit(['status', '--porcelain', '-b', '-uall']),
        rounds,
      ),
    )
    rows.push(
      await compare(
        'log -n 100',
        backend,
        async () =>
          `${(await tool('log', { limit: 100 })).replace(/\n*\.\.\. \(more commits[^\n]*$/, '')}\n`,
        () => runGit(['log', '--no-decorate', '-n', '100']),
        rounds,
      ),
    )
    await session.close()
  }
  if (process.env.GIT_BENCH_BROWSER !== '0') {
    const browser = await browserRows(
      DATA,
      {
        status: () => runGit(['status', '--porcelain', '-b', '-uall']),
        log: () => runGit(['log', '--no-decorate', '-n', '100']),
      },
      Math.max(3, Math.ceil(ROUNDS / 2)),
    )
    console.log(
      `browser: ${browser.files} files imported into lightning-fs in ${(browser.importMs / 1000).toFixed(1)} s; first status (hashes every file once) ${browser.firstStatusMs.toFixed(0)} ms`,
    )
    for (const r of browser.rows)
      rows.push({ ...r, backend: 'isomorphic-git, Chromium + lightning-fs' })
  }

  console.log(
    '\n| operation | ours via | ours (ms) | git CLI (ms) | ratio (ours / git) | per-round range |',
  )
  console.log('|---|---|---:|---:|---:|---|')
  for (const r of rows) {
    console.log(
      `| ${r.operation} | ${r.backend} | ${r.oursMs.toFixed(1)} | ${r.peerMs.toFixed(1)} | ${r.ratio.toFixed(2)}× | ${r.range[0].toFixed(2)}–${r.range[1].toFixed(2)} |`,
    )
  }
}

await main()
