// bash tool overhead: a command run through a session against a bare
// `child_process.spawn('bash', ['-c', cmd])` of the same command, stdout and stderr collected
// until the pipes close.
//
// Ours, two ways, on a local workspace (a temp dir holding a few files):
// - host-direct `session.tool('bash', { command })`: the whole kernel (validation, queue,
//   deadline, sanitisation, projection with SHA-256 evidence) plus the tool (a bounded walk of the
//   workspace before and after the command for changed paths, detached process group, clean
//   env, head+tail capture of both streams, a group check after exit);
// - `session.bash(command)`: the typed helper over the same call.
// Commands: `true`, and one printing 1,000,000 bytes (`head -c 1000000 /dev/zero | tr '\0' x`,
// captured as its first 64 KiB and last 36 KiB). A last row runs `true` in a workspace of
// 2,000 files, to show the cost of the changed-paths walk.
//
//   npx tsx bench/bash.ts      (or `npm run bench:bash`)
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { Agent, type Session, type ToolResult } from '../adapters/index.ts'
import { localWorkspace } from '../adapters/node/index.ts'
import {
  compare,
  formatSpread,
  formatTable,
  machineLine,
  sinkValue,
  type Row,
  type TimingOptions,
} from './harness.ts'

const TRUE = 'true'
const MEGABYTE = "head -c 1000000 /dev/zero | tr '\\0' x"
const MANY_FILES = 2000

/** The peer: a bare spawn of `bash -c command`, both streams collected until they close. */
function bareSpawn(command: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] })
    let bytes = 0
    let open = 2
    let code: number | null = null
    let exited = false
    const done = () => {
      if (open === 0 && exited) resolve(bytes + (code ?? 0))
    }
    child.stdout.on('data', (c: Buffer) => (bytes += c.length))
    child.stderr.on('data', (c: Buffer) => (bytes += c.length))
    child.stdout.on('close', () => (open--, done()))
    child.stderr.on('close', () => (open--, done()))
    child.on('error', reject)
    child.on('exit', (c) => {
      code = c
      exited = true
      done()
    })
  })
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(`bench/bash: ${message}`)
}

function loadLine(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')
}

async function workspace(files: number): Promise<{ session: Session; root: string }> {
  const root = mkdtempSync(join(os.tmpdir(), 'isoagent-bench-bash-'))
  for (let i = 0; i < files; i++) {
    const dir = join(root, `d${i % 20}`)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`)
  }
  return { session: await Agent.create().session(localWorkspace(root)), root }
}

async function main(): Promise<void> {
  console.log('bash tool: session calls vs a bare child_process.spawn of the same command')
  console.log(machineLine())
  const loadAtStart = loadLine()
  console.log()

  const small = await workspace(8)
  const large = await workspace(MANY_FILES)
  try {
    const tool = (s: Session, command: string) => () => s.tool('bash', { command })
    const helper = (s: Session, command: string) => () => s.bash(command)

    // Check every operation once before timing.
    const one = (await small.session.tool('bash', { command: MEGABYTE })) as ToolResult
    const meta = one.metadata as { output: { total_bytes: number; captured_bytes: number } }
    check(one.exitCode === 0, `1 MB command failed: ${one.output.slice(0, 200)}`)
    check(meta.output.total_bytes === 1_000_000, '1 MB command: wrong total')
    check(meta.output.captured_bytes === 65536 + 36864, '1 MB command: wrong capture')
    check((await bareSpawn(MEGABYTE)) === 1_000_000, 'bare spawn: wrong byte count')
    check((await small.session.bash(TRUE)) === '', 'true printed something')
    const walked = (await large.session.tool('bash', { command: TRUE })).metadata as {
      changed_paths: { scanned: number }
    }
    check(walked.changed_paths.scanned === MANY_FILES + 20, 'large workspace: wrong walk')

    const timing: TimingOptions = { sliceMs: 40, warmupMs: 400, minWarmupCalls: 20 }
    const rows: Row[] = []
    const cases: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
      ['session.tool bash `true`', tool(small.session, TRUE), () => bareSpawn(TRUE)],
      ['session.bash `true`', helper(small.session, TRUE), () => bareSpawn(TRUE)],
      ['session.tool bash 1 MB output', tool(small.session, MEGABYTE), () => bareSpawn(MEGABYTE)],
      ['session.bash 1 MB output', helper(small.session, MEGABYTE), () => bareSpawn(MEGABYTE)],
      [
        `session.tool bash \`true\`, ${MANY_FILES}-file workspace`,
        tool(large.session, TRUE),
        () => bareSpawn(TRUE),
      ],
    ]
    for (const [name, ours, peer] of cases) {
      rows.push(await compare(name, ours, peer, timing))
      console.log(`  measured: ${name}`)
    }
    console.log()
    console.log(formatTable(rows, 'bare spawn'))
    console.log()
    console.log('ratio = ours / peer, median of the per-round ratios. Rounds:')
    console.log(formatSpread(rows))
    console.log()
    console.log(
      `load average (1, 5, 15 min): ${loadAtStart} at the start, ${loadLine()} at the end`,
    )
    if (sinkValue() < 0) console.log('(unreachable)')
  } finally {
    await small.session.close()
    await large.session.close()
    rmSync(small.root, { recursive: true, force: true })
    rmSync(large.root, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
