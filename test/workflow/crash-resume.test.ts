import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseJournal } from '../../src/tools/dynamic-workflow/workspace-workflow-store.ts'

// A real crash: a Node child process drives a workflow on a local workspace (the file store
// `.a3s/workflow/<run_id>.jsonl`) and is killed with SIGKILL mid-run; a second process resumes
// the run id and finishes it. Every step appends its id to counter.txt, so a completed step that
// ran again would show up twice.

const repo = resolve(import.meta.dirname, '../..')
const STEPS = 12

const SOURCE = `export default async function run(ctx, inputs) {
  if (inputs.kind === 'step') {
    const r = await ctx.tool('bash', { command: 'echo ' + inputs.step_id + ' >> counter.txt; sleep 0.25' })
    if (r.exitCode !== 0) throw new Error(r.output)
    return inputs.input.i
  }
  const ids = Array.from({ length: inputs.input.n }, (_, i) => 'step' + i)
  const missing = ids.filter((id) => !(id in inputs.step_outputs))
  if (missing.length > 0)
    return { type: 'schedule_steps', steps: missing.map((id) => ({ step_id: id, step_name: 'count', input: { i: Number(id.slice(4)) } })) }
  return { type: 'complete', output: { sum: ids.reduce((s, id) => s + inputs.step_outputs[id], 0) } }
}`

// With TEAR_AT=k the child tears its k-th step_completed append: it writes half the line, says
// TORN and blocks there, to be killed with SIGKILL in the middle of the append.
const CHILD = `import { Agent } from ${JSON.stringify(join(repo, 'adapters/index.ts'))}
import { localWorkspace } from ${JSON.stringify(join(repo, 'adapters/node/index.ts'))}
import { readFileSync } from 'node:fs'
import nodeFs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
const [root, sourceFile] = process.argv.slice(2)
const tearAt = Number(process.env.TEAR_AT ?? 0)
if (tearAt > 0) {
  // The local disk's append writes with node:fs writeSync (its named export, kept in step).
  const writeSync = nodeFs.writeSync
  let completions = 0
  nodeFs.writeSync = function (fd, data, ...rest) {
    if (data instanceof Uint8Array) {
      const text = new TextDecoder().decode(data)
      if (text.startsWith('{"type":"step_completed"') && ++completions === tearAt) {
        writeSync(fd, data.subarray(0, data.length >> 1))
        console.log('TORN')
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)
      }
    }
    return writeSync.call(this, fd, data, ...rest)
  }
  syncBuiltinESMExports()
}
const session = await Agent.create().session(localWorkspace(root, { searchThreads: 0 }), { workflows: {} })
const result = await session.tool('dynamic_workflow', {
  source: readFileSync(sourceFile, 'utf8'),
  run_id: 'crash-run',
  input: { n: ${STEPS} },
  limits: { maxConcurrentSteps: 2, maxToolCalls: 5 },
})
console.log('RESULT ' + JSON.stringify({ exitCode: result.exitCode, output: result.output, metadata: result.metadata }))
await session.close()
process.exit(0)
`

let base: string
let root: string
const children: ChildProcess[] = []
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'isoagent-wf-crash-'))
  root = join(base, 'root')
  mkdirSync(root)
  writeFileSync(join(base, 'child.mts'), CHILD)
  writeFileSync(join(base, 'workflow.js'), SOURCE)
})
afterEach(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  rmSync(base, { recursive: true, force: true })
})

function start(env: Record<string, string> = {}): {
  child: ChildProcess
  done: Promise<string>
  output: () => string
} {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(base, 'child.mts'), root, join(base, 'workflow.js')],
    {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    },
  )
  children.push(child)
  let out = ''
  let err = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()))
  const done = new Promise<string>((resolve) => child.on('exit', () => resolve(out + err)))
  return { child, done, output: () => out }
}

const journalPath = () => join(root, '.a3s/workflow/crash-run.jsonl')
const journal = () =>
  existsSync(journalPath()) ? parseJournal(readFileSync(journalPath(), 'utf8')).events : []
const completedIds = () =>
  journal().flatMap((e) => (e.type === 'step_completed' ? [e.step_id] : []))

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (check()) return true
    await new Promise((r) => setTimeout(r, 10))
  }
  return check()
}

/** Resume the run in a new process; check it finished with every step completed once. */
async function resumeAndCheck(completedAtKill: Set<string>): Promise<Map<string, number>> {
  const second = start()
  const output = await second.done
  const line = output.split('\n').find((l) => l.startsWith('RESULT '))
  expect(line, output).toBeDefined()
  const result = JSON.parse(line!.slice(7)) as { exitCode: number; output: string }
  expect(result.exitCode, result.output).toBe(0)
  expect(JSON.parse(result.output)).toEqual({ sum: (STEPS * (STEPS - 1)) / 2 })

  const counts = new Map<string, number>()
  for (const id of readFileSync(join(root, 'counter.txt'), 'utf8').split('\n').filter(Boolean))
    counts.set(id, (counts.get(id) ?? 0) + 1)
  for (const id of completedAtKill) expect(counts.get(id), `${id} ran again`).toBe(1)
  for (let i = 0; i < STEPS; i++) expect(counts.get(`step${i}`)).toBeGreaterThanOrEqual(1)
  const events = journal()
  expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1))
  const completions = completedIds()
  expect(new Set(completions).size).toBe(completions.length)
  expect(completions).toHaveLength(STEPS)
  expect(events.at(-1)!.type).toBe('run_completed')
  return counts
}

describe('dynamic_workflow crash and resume', () => {
  it('resumes a run killed with SIGKILL without re-running a completed step', async () => {
    const first = start()
    const midway = await waitFor(() => completedIds().length >= 4, 60_000)
    expect(midway, 'the first process never completed four steps').toBe(true)
    first.child.kill('SIGKILL')
    await first.done
    expect(first.child.signalCode).toBe('SIGKILL')
    const completedAtKill = new Set(completedIds())
    expect(completedAtKill.size).toBeGreaterThanOrEqual(4)
    expect(completedAtKill.size).toBeLessThan(STEPS)
    expect(journal().some((e) => e.type === 'run_completed')).toBe(false)

    await resumeAndCheck(completedAtKill)
  }, 120_000)

  it('resumes a run killed in the middle of an append (a torn last line): no completed step lost or run again', async () => {
    const first = start({ TEAR_AT: '5' })
    const torn = await waitFor(() => first.output().includes('TORN'), 60_000)
    expect(torn, 'the first process never reached its fifth completion').toBe(true)
    first.child.kill('SIGKILL')
    await first.done
    expect(first.child.signalCode).toBe('SIGKILL')
    // The journal ends in half a step_completed line: the four before it are whole.
    const text = readFileSync(journalPath(), 'utf8')
    expect(text.endsWith('\n')).toBe(false)
    expect(text.slice(text.lastIndexOf('\n') + 1)).toMatch(/^\{"type":"step_completed"/)
    const completedAtKill = new Set(completedIds())
    expect(completedAtKill.size).toBe(4)

    const counts = await resumeAndCheck(completedAtKill)
    // A step not completed at the kill (the torn one, one in flight) ran at most once more.
    for (let i = 0; i < STEPS; i++)
      if (!completedAtKill.has(`step${i}`)) expect(counts.get(`step${i}`)).toBeLessThanOrEqual(2)
    // The torn bytes are gone: every line of the journal is whole.
    const after = readFileSync(journalPath(), 'utf8')
    expect(after.endsWith('\n')).toBe(true)
    for (const line of after.trimEnd().split('\n')) expect(() => JSON.parse(line)).not.toThrow()
  }, 120_000)
})
