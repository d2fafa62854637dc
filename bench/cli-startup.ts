// CLI start-up: the wall time of one `isoagent call read` (a process started, a session over the
// current directory, one read of one line, the answer printed, the process gone) against a bare
// `node -e 0` started the same way. Both are child processes spawned from here, one after the
// other in alternating order, so a load spike on a shared machine lands on both alike; reported
// as medians over the rounds and their ratio (goal: at most 1.3×).
//
// Runs the built CLI (bin/isoagent.mjs over the bundle in dist/cli/): `npm run build` first.
//
//   npx tsx bench/cli-startup.ts      (or `npm run bench:cli`)
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { compare, machineLine, type Row } from './harness.ts'

const root = fileURLToPath(new URL('..', import.meta.url))
// CLI_BENCH_BIN: another launcher (e.g. a copy of an earlier build) to time instead.
const bin =
  process.env.CLI_BENCH_BIN ?? fileURLToPath(new URL('../bin/isoagent.mjs', import.meta.url))
const READ = ['call', 'read', '{"file_path":"package.json","limit":1}']
const GOAL = 1.3

function run(args: string[], expect: (stdout: string) => boolean): () => number {
  return () => {
    const child = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' })
    if (child.status !== 0 || !expect(child.stdout))
      throw new Error(`${args.join(' ')} failed (${child.status}): ${child.stderr}`)
    return child.stdout.length
  }
}

const ms = (us: number) => (us / 1000).toFixed(1)

function table(rows: readonly Row[]): string {
  const header = ['command', 'ours ms', 'node -e 0 ms', 'ratio', 'ratio range']
  const body = rows.map((r) => [
    r.operation,
    ms(r.oursUs),
    ms(r.peerUs),
    `${r.ratio.toFixed(2)}×`,
    `${r.ratioRange[0].toFixed(2)}–${r.ratioRange[1].toFixed(2)}×`,
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((c) => c[i]!.length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`
  const rule = `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : '-'.repeat(w - 1) + ':')).join(' | ')} |`
  return [line(header), rule, ...body.map(line)].join('\n')
}

async function main() {
  if (!existsSync(new URL('../dist/cli/isoagent.js', import.meta.url)))
    throw new Error('dist/ is missing: run `npm run build` first')
  const rounds = Number(process.env.ROUNDS ?? 15)
  const options = { rounds, slices: 2, callsPerSlice: 1, warmupMs: 0, minWarmupCalls: 3 }
  const bare = run(['-e', '0'], (out) => out === '')
  const rows = [
    await compare(
      `isoagent ${READ.slice(0, 2).join(' ')} '${READ[2]}'`,
      run([bin, ...READ], (out) => out.includes('{')),
      bare,
      options,
    ),
    await compare(
      'isoagent tools',
      run([bin, 'tools'], (out) => out.startsWith('read')),
      bare,
      options,
    ),
  ]
  console.log(`# CLI start-up (${machineLine()})`)
  console.log(`${rounds} rounds of 2 alternating runs per side; medians; goal ≤ ${GOAL}×\n`)
  console.log(table(rows))
  const read = rows[0]!
  console.log(`\n${read.ratio <= GOAL ? 'goal held' : 'GOAL MISSED'}: ${read.ratio.toFixed(2)}×`)
}

await main()
