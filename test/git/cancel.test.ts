// Stopping git: a call that is cancelled or times out ends promptly with a typed failure, and on
// the CLI path no git process (nor anything git started) is left running. git is made to block
// for real: a FIFO as `.git/info/exclude` (read by `git status`), or a clean filter from the
// repository's own configuration that does not return (run by `git add`).
import { execFileSync } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import {
  Agent,
  IsoagentError,
  isomorphicGitBackend,
  memoryWorkspace,
  workspaceGitFs,
  type IsoGitFs,
  type Session,
} from '../../adapters/index.ts'
import { gitCliBackend, localWorkspace } from '../../adapters/node/index.ts'
import { AUTHOR, filesOf, git, removeTemps, standardRepo, tempDir, write } from './git-fixture.ts'

/** Live processes whose working directory is `dir` (git and what it starts run there). */
function processesIn(dir: string): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
      if (state === 'Z' || state === 'X') continue
      if (readlinkSync(`/proc/${name}/cwd`) === dir) out.push(Number(name))
    } catch {
      // Gone meanwhile, or not ours to inspect.
    }
  }
  return out
}

async function waitFor(what: string, test: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms
  while (!test()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const repos: string[] = []
const sessions: Session[] = []

/** A copy of the standard repository whose `git status` blocks reading `.git/info/exclude`. */
function repoWithBlockingStatus(): string {
  const root = realpathSync(standardRepo())
  rmSync(join(root, '.git/info/exclude'), { force: true })
  execFileSync('mkfifo', [join(root, '.git/info/exclude')])
  repos.push(root)
  return root
}

/**
 * A repository whose `git add` blocks in a clean filter (`trap` makes the filter ignore
 * SIGTERM when `stubborn`); `new.txt` is the untracked file `add` would stage.
 */
function repoWithBlockingAdd(stubborn = false): string {
  const root = realpathSync(standardRepo())
  git(root, 'config', 'filter.slow.clean', stubborn ? "trap '' TERM; sleep 60" : 'sleep 60')
  write(root, '.gitattributes', 'new.txt filter=slow\n')
  git(root, 'add', '.gitattributes')
  git(root, 'commit', '-q', '-m', 'attributes')
  write(root, 'new.txt', 'new\n')
  repos.push(root)
  return root
}

async function cliSession(root: string, timeoutMs?: number): Promise<Session> {
  const session = await Agent.create().session(localWorkspace(root, { git: 'cli' }), {
    gitAuthor: AUTHOR,
    ...(timeoutMs === undefined ? {} : { toolTimeoutMs: { git: timeoutMs } }),
  })
  sessions.push(session)
  return session
}

afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close()
  // A failing run must not leave git blocked behind it.
  for (const root of repos.splice(0))
    for (const pid of processesIn(root)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone
      }
    }
})
afterAll(removeTemps)

describe('git CLI: a stopped call stops its git process', () => {
  it('a cancelled status kills the blocked git at once and returns cancelled', async () => {
    const root = repoWithBlockingStatus()
    const session = await cliSession(root)
    const controller = new AbortController()
    const call = session.tool('git', { command: 'status' }, { signal: controller.signal })
    await waitFor('git to run', () => processesIn(root).length > 0)
    const abortedAt = Date.now()
    controller.abort()
    const result = await call
    const took = Date.now() - abortedAt
    expect(result.exitCode).toBe(1)
    expect(result.errorKind?.type, result.output).toBe('cancelled')
    expect(result.metadata?.still_running, result.output).toBe(false)
    // Reading commands get no grace: SIGTERM ends git well within the kernel's 2 s.
    expect(took).toBeLessThan(1_500)
    expect(processesIn(root)).toEqual([])
  })

  it('a status past its deadline is killed and returns timeout', async () => {
    const root = repoWithBlockingStatus()
    const session = await cliSession(root, 800)
    const started = Date.now()
    const result = await session.tool('git', { command: 'status' })
    const took = Date.now() - started
    expect(result.errorKind?.type, result.output).toBe('timeout')
    expect(result.metadata?.still_running, result.output).toBe(false)
    expect(took).toBeLessThan(800 + 1_500)
    expect(processesIn(root)).toEqual([])
    // Nothing is left blocked or locked: the next call (without the FIFO) works.
    rmSync(join(root, '.git/info/exclude'))
    expect((await session.tool('git', { command: 'status' })).exitCode).toBe(0)
  })

  it('a cancelled add gets its grace, then git and its filter are killed; no lock is left', async () => {
    const root = repoWithBlockingAdd()
    const before = git(root, 'status', '--porcelain')
    const session = await cliSession(root)
    const controller = new AbortController()
    const call = session.tool('git', { command: 'add' }, { signal: controller.signal })
    await waitFor('git add and its filter', () => processesIn(root).length >= 2)
    expect(existsSync(join(root, '.git/index.lock'))).toBe(true)
    const abortedAt = Date.now()
    controller.abort()
    const result = await call
    const took = Date.now() - abortedAt
    expect(result.errorKind?.type, result.output).toBe('cancelled')
    expect(result.metadata?.still_running, result.output).toBe(false)
    // A command that changes the repository may finish within 1 s; this one cannot.
    expect(took).toBeGreaterThanOrEqual(900)
    expect(took).toBeLessThan(2_000)
    expect(processesIn(root)).toEqual([])
    // git removed its lock on SIGTERM: the index is as before and git works on.
    expect(existsSync(join(root, '.git/index.lock'))).toBe(false)
    expect(git(root, 'status', '--porcelain')).toBe(before)
  })

  it('a git that survives SIGTERM is SIGKILLed and only the lock it created is removed', async () => {
    const root = repoWithBlockingAdd(true)
    // A lock that exists before the call is not the killed git's: it stays.
    writeFileSync(join(root, '.git/refs/heads/keep.lock'), '')
    // Real git with SIGTERM blocked (the mask survives exec; git's handler never runs).
    const stubborn = join(tempDir('isoagent-git-bin-'), 'git')
    writeFileSync(
      stubborn,
      `#!/bin/sh\nexec perl -MPOSIX -e 'sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGTERM)) or die; exec @ARGV or die' -- git "$@"\n`,
    )
    chmodSync(stubborn, 0o755)
    const controller = new AbortController()
    const backend = gitCliBackend(root, { executable: stubborn }).withSignal(controller.signal)
    const adding = backend.add('').then(
      () => undefined,
      (error: unknown) => error,
    )
    await waitFor('git add and its filter', () => processesIn(root).length >= 2)
    await waitFor('the index lock', () => existsSync(join(root, '.git/index.lock')))
    const abortedAt = Date.now()
    controller.abort()
    const error = await adding
    const took = Date.now() - abortedAt
    expect(IsoagentError.is(error, 'cancelled'), String(error)).toBe(true)
    // 1 s grace for the change, 0.5 s after SIGTERM, then SIGKILL.
    expect(took).toBeGreaterThanOrEqual(1_400)
    expect(took).toBeLessThan(2_500)
    expect(processesIn(root)).toEqual([])
    expect(existsSync(join(root, '.git/index.lock'))).toBe(false)
    expect(existsSync(join(root, '.git/refs/heads/keep.lock'))).toBe(true)
    expect(git(root, 'status', '--porcelain')).toBe('?? new.txt\n')
  })

  it('a backend whose signal has aborted starts no git at all', async () => {
    const root = standardRepo()
    // git that leaves a trace of every start.
    const bin = tempDir('isoagent-git-bin-')
    const traced = join(bin, 'git')
    writeFileSync(traced, `#!/bin/sh\necho started >> '${join(bin, 'trace')}'\nexec git "$@"\n`)
    chmodSync(traced, 0o755)
    const who = { ...AUTHOR, timestamp: 0, tz: '+0000' }
    const plain = gitCliBackend(root, { executable: traced })
    expect((await plain.head()).branch).toBe('main')
    expect(readFileSync(join(bin, 'trace'), 'utf8')).not.toBe('')
    rmSync(join(bin, 'trace'))
    const controller = new AbortController()
    controller.abort()
    const backend = plain.withSignal(controller.signal)
    await expect(backend.status()).rejects.toMatchObject({ code: 'cancelled' })
    await expect(backend.commit('x\n', who)).rejects.toMatchObject({ code: 'cancelled' })
    await expect(backend.createBranch('x', 'HEAD')).rejects.toMatchObject({ code: 'cancelled' })
    expect(existsSync(join(bin, 'trace'))).toBe(false)
    expect(git(root, 'branch', '--list', 'x')).toBe('')
  })
})

describe('isomorphic-git: a stopped call ends at its next step', () => {
  it('a cancelled status returns cancelled, never its result', async () => {
    // Enough files that status takes a while in process.
    const dir = standardRepo()
    for (let i = 0; i < 1500; i++) write(dir, `many/f${i}.txt`, `file ${i}\n`)
    git(dir, 'add', '-A')
    git(dir, 'commit', '-q', '-m', 'many files')
    for (let i = 0; i < 1500; i += 3) write(dir, `many/f${i}.txt`, `changed ${i}\n`)
    const session = await Agent.create().session(memoryWorkspace(filesOf(dir)), {
      gitAuthor: AUTHOR,
    })
    sessions.push(session)
    const controller = new AbortController()
    const events = session.events({ signal: controller.signal })
    const call = session.tool('git', { command: 'status' }, { signal: controller.signal })
    for await (const event of events) if (event.type === 'tool_start') break
    await new Promise((resolve) => setTimeout(resolve, 20))
    const abortedAt = Date.now()
    controller.abort()
    const result = await call
    const took = Date.now() - abortedAt
    expect(result.errorKind?.type, result.output).toBe('cancelled')
    expect(result.metadata?.still_running, result.output).toBe(false)
    expect(result.metadata?.interrupted).toBeUndefined()
    expect(took).toBeLessThan(1_000)
    // The same backend works for the next call (nothing cached from the stopped one is wrong).
    const again = await session.tool('git', { command: 'status', limit: 200 })
    expect(again.exitCode, again.output).toBe(0)
    expect(again.metadata?.total).toBe(500)
  })

  /**
   * The file system of a memory workspace holding `dir`, reporting each operation to `seen`
   * (`stat` aside, which a stopped call may still use).
   */
  function observed(dir: string, seen: (op: string) => void): IsoGitFs {
    const inner = workspaceGitFs(memoryWorkspace(filesOf(dir))).promises
    const promises = {} as Record<string, unknown>
    for (const [op, fn] of Object.entries(inner))
      promises[op] = (...args: unknown[]) => {
        if (op !== 'stat') seen(op)
        return (fn as (...a: unknown[]) => Promise<unknown>).apply(inner, args)
      }
    return { promises: promises as unknown as IsoGitFs['promises'] }
  }

  it('no file operation runs after the abort of a reading call', async () => {
    const dir = standardRepo()
    const controller = new AbortController()
    let ops = 0
    let afterAbort = 0
    const fs = observed(dir, () => {
      if (controller.signal.aborted) afterAbort++
      // Stop it in the middle of its work, at a fixed point.
      else if (++ops === 40) controller.abort()
    })
    const backend = isomorphicGitBackend({ fs }).withSignal(controller.signal)
    await expect(backend.status()).rejects.toMatchObject({ code: 'cancelled' })
    expect(controller.signal.aborted).toBe(true)
    expect(afterAbort).toBe(0)
  })

  it('a call that has begun writing runs to its end, and says so', async () => {
    const dir = standardRepo()
    write(dir, 'a.txt', 'a\n')
    write(dir, 'b.txt', 'b\n')
    write(dir, 'README.md', '# changed\n')
    const controller = new AbortController()
    const fs = observed(dir, (op) => {
      if (op === 'writeFile' && !controller.signal.aborted) controller.abort()
    })
    const backend = isomorphicGitBackend({ fs }).withSignal(controller.signal)
    const added = await backend.add('')
    expect(controller.signal.aborted).toBe(true)
    expect(added.map((a) => a.path)).toEqual(['README.md', 'a.txt', 'b.txt'])
    const status = await isomorphicGitBackend({ fs }).status()
    expect(status.entries.map((e) => `${e.index}${e.worktree} ${e.path}`)).toEqual([
      'M  README.md',
      'A  a.txt',
      'A  b.txt',
    ])
  })
})
