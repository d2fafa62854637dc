import { readFile, readdir, lstat, rm } from 'node:fs/promises'
import * as nodePath from 'node:path'
import { performance } from 'node:perf_hooks'
import {
  gitStoppedError,
  IsoagentError,
  stoppableGitBackend,
  type GitAddedPath,
  type GitBackend,
  type GitBranch,
  type GitCommit,
  type GitDiffFile,
  type GitHead,
  type GitRemote,
  type GitSignature,
  type GitStatus,
  type GitStatusEntry,
  type GitTreeChange,
  type GitWorktree,
} from '../../src/index.ts'
import { trackGroup, untrackGroup } from './process-groups.ts'

/** Options of {@link gitCliBackend}. */
export interface GitCliBackendOptions {
  /** The git executable (default `git` on PATH). */
  executable?: string
}

interface RunResult {
  code: number
  stdout: Uint8Array
  stderr: string
}

interface RunOptions {
  input?: string | Uint8Array
  env?: Record<string, string>
  /** The command changes the repository (refs, index, working tree, configuration). */
  changes?: boolean
}

/** One call's stop signal and whether the call has begun changing the repository. */
interface CallState {
  signal: AbortSignal | undefined
  /** A command that changes the repository has started in this call. */
  changing: boolean
  /** `performance.now()` by which a changing call must have finished once it is stopped. */
  finishBy: number
}

/**
 * How long a call that has begun changing the repository may run on after it is stopped (ms):
 * mutating commands are short, and finishing one beats leaving a half-switched working tree.
 */
const FINISH_GRACE_MS = 1_000
/** How long a stopped git process group gets after SIGTERM before SIGKILL (ms). */
const KILL_GRACE_MS = 500
/** git runs in a process group of its own (POSIX), so filters it starts are stopped with it. */
const GROUPS = process.platform !== 'win32'

const ZERO_OID = '0000000000000000000000000000000000000000'
const decoder = new TextDecoder()

/** node:child_process, loaded at the first git command rather than with this module. */
const childProcess = () => process.getBuiltinModule('node:child_process')

let detected: boolean | undefined

/** Whether a `git` executable is on PATH (checked once per process). */
export function gitCliAvailable(): boolean {
  if (detected === undefined) {
    try {
      childProcess().execFileSync('git', ['--version'], { stdio: 'ignore', timeout: 10_000 })
      detected = true
    } catch {
      detected = false
    }
  }
  return detected
}

/** Order of two strings by their UTF-8 bytes, as git sorts. */
function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b))
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0
}

/** Number of leading characters `a` and `b` share. */
function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a[i] === b[i]) i++
  return i
}

function splitNul(bytes: Uint8Array): string[] {
  const parts = decoder.decode(bytes).split('\0')
  if (parts[parts.length - 1] === '') parts.pop()
  return parts
}

/**
 * The git backend on the git CLI, for a repository at `root` on local disk. Every call runs
 * `git` with a clean environment: no system or global configuration, no hooks, no pager, no
 * prompts, no optional locks, and no repository above `root` (`GIT_CEILING_DIRECTORIES`), so
 * answers depend on the repository alone and match the isomorphic-git backend.
 *
 * Stopping ({@link GitBackend.withSignal}): git runs in a process group of its own. When the
 * signal aborts, a reading command (status, log, diff, cat-file, rev-parse, ...) is stopped at
 * once: the group gets SIGTERM, then SIGKILL after 500 ms if anything of it is still there. A
 * call that has started a command changing the repository (checkout, branch, add, commit, stash
 * store/pop, reset, init) gets 1 s from the abort to finish its remaining commands (they take
 * milliseconds on ordinary repositories; git stopped inside `checkout` leaves a half-switched
 * working tree), and is then stopped the same way. git removes its own lock files on SIGTERM;
 * after a SIGKILL, lock files (`*.lock` in the git directory and under `refs/`) that did not
 * exist before the killed command started are removed, as git would have. Once stopped, no new
 * git command starts. Groups still running when the host process exits get SIGTERM (a host
 * killed by a signal it does not handle cannot do that: close sessions on SIGINT/SIGTERM). On
 * Windows only the git process itself is killed.
 */
export function gitCliBackend(root: string, options: GitCliBackendOptions = {}): GitBackend {
  return cliBackend(root, options, { signal: undefined, changing: false, finishBy: 0 })
}

/** The git directory and the common directory (they differ in a linked worktree). */
async function gitDirs(root: string): Promise<string[]> {
  const dotGit = nodePath.join(root, '.git')
  try {
    const s = await lstat(dotGit)
    if (s.isDirectory()) return [dotGit]
    const pointer = /^gitdir: (.+)$/m.exec(await readFile(dotGit, 'utf8'))
    if (pointer === null) return []
    const gitdir = nodePath.resolve(root, pointer[1]!.trim())
    const common = await readFile(nodePath.join(gitdir, 'commondir'), 'utf8').then(
      (text) => nodePath.resolve(gitdir, text.trim()),
      () => gitdir,
    )
    return common === gitdir ? [gitdir] : [gitdir, common]
  } catch {
    return []
  }
}

/** Lock files git may hold: `*.lock` at the top of the git directories and under `refs/`. */
async function lockFiles(root: string): Promise<Set<string>> {
  const out = new Set<string>()
  for (const dir of await gitDirs(root)) {
    const top = await readdir(dir).catch(() => [] as string[])
    for (const name of top) if (name.endsWith('.lock')) out.add(nodePath.join(dir, name))
    const refs = await readdir(nodePath.join(dir, 'refs'), { recursive: true }).catch(
      () => [] as string[],
    )
    for (const name of refs) if (name.endsWith('.lock')) out.add(nodePath.join(dir, 'refs', name))
  }
  return out
}

function cliBackend(root: string, options: GitCliBackendOptions, call: CallState): GitBackend {
  const executable = options.executable ?? 'git'
  const baseEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CEILING_DIRECTORIES: nodePath.dirname(root),
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_PAGER: 'cat',
    // Paths are file names, never pathspec magic (`:(glob)`, `:/`, wildcards).
    GIT_LITERAL_PATHSPECS: '1',
    LC_ALL: 'C',
  }
  const prefixArgs = [
    '-c',
    'core.quotepath=off',
    '-c',
    'core.hooksPath=/dev/null',
    '-c',
    'commit.gpgsign=false',
    '-c',
    'core.fsmonitor=false',
    '--no-optional-locks',
  ]

  /** Throws when the call is stopped, unless it is finishing a change within its grace. */
  function mayStart(): void {
    const signal = call.signal
    if (signal === undefined || !signal.aborted) return
    if (call.changing && performance.now() < call.finishBy) return
    throw gitStoppedError(signal)
  }

  async function run(args: string[], options: RunOptions = {}): Promise<RunResult> {
    mayStart()
    let locksBefore: Set<string> | undefined
    if (options.changes === true) {
      locksBefore = await lockFiles(root)
      mayStart()
      call.changing = true
    }
    return spawnGit(args, options, locksBefore)
  }

  function spawnGit(
    args: string[],
    options: RunOptions,
    locksBefore: Set<string> | undefined,
  ): Promise<RunResult> {
    return new Promise((resolve, reject) => {
      const signal = call.signal
      const child = childProcess().spawn(executable, [...prefixArgs, ...args], {
        cwd: root,
        env: { ...baseEnv, ...options.env },
        stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        detached: GROUPS,
      })
      const out: Buffer[] = []
      const err: Buffer[] = []
      let settled = false
      let stopping = false
      const timers: ReturnType<typeof setTimeout>[] = []
      const group = GROUPS ? child.pid : undefined
      // At host exit: SIGTERM, so git removes its locks.
      if (group !== undefined) trackGroup(group, 'SIGTERM')
      const settle = () => {
        settled = true
        if (group !== undefined) untrackGroup(group)
        for (const timer of timers) clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
      }
      const send = (name: NodeJS.Signals) => {
        try {
          if (group !== undefined) process.kill(-group, name)
          else child.kill(name)
        } catch {
          // ESRCH: the group is gone already.
        }
      }
      const stop = () => {
        if (settled) return
        stopping = true
        send('SIGTERM')
        timers.push(
          setTimeout(() => {
            send('SIGKILL')
            // A process that left the group may still hold the pipes: do not wait for them.
            timers.push(
              setTimeout(() => {
                if (settled) return
                settle()
                child.stdout?.destroy()
                child.stderr?.destroy()
                reject(gitStoppedError(signal!))
              }, KILL_GRACE_MS),
            )
          }, KILL_GRACE_MS),
        )
      }
      function onAbort() {
        // A reading command stops at once; a change gets what is left of the call's grace.
        const wait = call.changing ? Math.max(0, call.finishBy - performance.now()) : 0
        if (wait === 0) stop()
        else timers.push(setTimeout(stop, wait))
      }
      child.stdout!.on('data', (chunk: Buffer) => out.push(chunk))
      child.stderr!.on('data', (chunk: Buffer) => err.push(chunk))
      child.on('error', (error) => {
        if (settled) return
        settle()
        reject(new IsoagentError('io', `git could not be run: ${error.message}`, { cause: error }))
      })
      child.on('close', (code, exitSignal) => {
        if (settled) return
        settle()
        if (stopping && code !== 0) {
          // Stopped (killed, or failed because a filter it ran was killed). SIGTERM lets git
          // remove its lock files itself; after SIGKILL, remove those that appeared while it ran
          // (a lock that was there before is someone else's). A command that still exited 0
          // finished its work: its result stands.
          const cleanup =
            locksBefore !== undefined && exitSignal === 'SIGKILL'
              ? lockFiles(root).then((after) =>
                  Promise.all(
                    [...after]
                      .filter((path) => !locksBefore.has(path))
                      .map((path) => rm(path, { force: true })),
                  ),
                )
              : Promise.resolve()
          void cleanup.catch(() => undefined).then(() => reject(gitStoppedError(signal!)))
          return
        }
        resolve({
          code: code ?? 1,
          stdout: new Uint8Array(Buffer.concat(out)),
          stderr: Buffer.concat(err).toString('utf8'),
        })
      })
      if (child.stdin !== null) {
        // git may exit before reading all of its input; its exit status tells what happened.
        child.stdin.on('error', () => {})
        child.stdin.end(options.input)
      }
      if (signal !== undefined) {
        signal.addEventListener('abort', onAbort, { once: true })
        if (signal.aborted) onAbort()
      }
    })
  }

  /** Run and insist on success. */
  async function ok(args: string[], options: RunOptions = {}): Promise<Uint8Array> {
    const result = await run(args, options)
    if (result.code !== 0) {
      const message =
        result.stderr.trim().split('\n').slice(0, 6).join('\n') || `exit ${result.code}`
      throw new IsoagentError('io', `git ${args[0]} failed: ${message}`, {
        data: { exit_code: result.code },
      })
    }
    return result.stdout
  }

  const text = async (args: string[]) => decoder.decode(await ok(args))

  function who(s: GitSignature): Record<string, string> {
    const date = `@${s.timestamp} ${s.tz}`
    return {
      GIT_AUTHOR_NAME: s.name,
      GIT_AUTHOR_EMAIL: s.email,
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_NAME: s.name,
      GIT_COMMITTER_EMAIL: s.email,
      GIT_COMMITTER_DATE: date,
    }
  }

  async function headOid(): Promise<string | null> {
    const r = await run(['rev-parse', '-q', '--verify', 'HEAD^{commit}'])
    return r.code === 0 ? decoder.decode(r.stdout).trim() : null
  }

  async function statusOf(): Promise<GitStatus> {
    const records = splitNul(
      await ok([
        'status',
        '--porcelain=v2',
        '--branch',
        '-z',
        '--untracked-files=all',
        '--no-renames',
      ]),
    )
    const head: GitHead = { branch: null, oid: null }
    let upstreamName: string | undefined
    let counts: [number, number] | undefined
    const out: GitStatusEntry[] = []
    const letter = (c: string) => (c === '.' ? ' ' : c)
    for (const record of records) {
      if (record.startsWith('# branch.oid ')) {
        const oid = record.slice('# branch.oid '.length)
        head.oid = oid === '(initial)' ? null : oid
      } else if (record.startsWith('# branch.head ')) {
        const branch = record.slice('# branch.head '.length)
        head.branch = branch === '(detached)' ? null : branch
      } else if (record.startsWith('# branch.upstream ')) {
        upstreamName = record.slice('# branch.upstream '.length)
      } else if (record.startsWith('# branch.ab ')) {
        const m = /^# branch\.ab \+(\d+) -(\d+)$/.exec(record)
        if (m !== null) counts = [Number(m[1]), Number(m[2])]
      } else if (record.startsWith('1 ')) {
        const fields = record.split(' ')
        const path = fields.slice(8).join(' ')
        const xy = fields[1]!
        out.push({ path, index: letter(xy[0]!), worktree: letter(xy[1]!) })
      } else if (record.startsWith('u ')) {
        const fields = record.split(' ')
        const xy = fields[1]!
        out.push({ path: fields.slice(10).join(' '), index: xy[0]!, worktree: xy[1]! })
      } else if (record.startsWith('? ')) {
        out.push({ path: record.slice(2), index: '?', worktree: '?' })
      }
    }
    // A detached HEAD has no upstream in `git status -b` (porcelain v2 may name one).
    const upstream: GitStatus['upstream'] =
      head.branch === null || upstreamName === undefined
        ? null
        : counts === undefined
          ? { name: upstreamName, ahead: null, behind: null, gone: true }
          : { name: upstreamName, ahead: counts[0], behind: counts[1], gone: false }
    return { head, upstream, entries: out }
  }

  /** Objects whose ids start with any of `prefixes` (4 digits or more), by `rev-parse`. */
  async function objectsStartingWith(prefixes: string[]): Promise<string[]> {
    const out: string[] = []
    for (let i = 0; i < prefixes.length; i += 1000) {
      const args = prefixes.slice(i, i + 1000).map((p) => `--disambiguate=${p}`)
      const listed = await text(['rev-parse', ...args])
      for (const line of listed.split('\n')) if (line.length > 0) out.push(line)
    }
    return out
  }

  /** How far the objects near `probe` would extend its abbreviation (0: not past 4 digits). */
  const extension = (probe: string, objects: string[]) =>
    objects.reduce((n, other) => Math.max(n, commonPrefix(probe, other) + 1), 0)

  /**
   * git's abbreviations of `oids`. git shows its minimum length (`core.abbrev`, or auto from the
   * object count) only through `rev-parse --short`, which also extends it past near objects: the
   * all-zero id, whose near objects `--disambiguate` lists in the same call as those of `oids`,
   * yields the minimum unless an object starts with as many zeros (then the all-`f` id is asked
   * too). Each oid is then extended past the objects that share its first digits, as git does.
   */
  async function abbreviate(oids: readonly string[]): Promise<string[]> {
    if (oids.length === 0) return []
    const shortest = async (probe: string) =>
      (await text(['rev-parse', '--short', probe])).trim().length
    const prefixesOf = (n: number) => [...new Set(oids.map((oid) => oid.slice(0, n)))]
    let minimum = await shortest(ZERO_OID)
    if (minimum >= 40) return [...oids]
    let objects = await objectsStartingWith(['0000', ...prefixesOf(minimum)])
    if (extension(ZERO_OID, objects) >= minimum) {
      const last = 'f'.repeat(40)
      minimum = Math.min(minimum, await shortest(last))
      objects = await objectsStartingWith(prefixesOf(minimum))
    }
    return oids.map((oid) => {
      let length = minimum
      for (const other of objects) {
        if (other === oid || !other.startsWith(oid.slice(0, minimum))) continue
        const common = commonPrefix(oid, other)
        // git stops extending at 32 common digits (GIT_MAX_RAWSZ).
        if (common < 32 && common >= length) length = common + 1
      }
      return oid.slice(0, length)
    })
  }

  async function readBlobs(oids: string[]): Promise<Map<string, Uint8Array>> {
    const out = new Map<string, Uint8Array>()
    if (oids.length === 0) return out
    const bytes = await ok(['cat-file', '--batch'], { input: `${oids.join('\n')}\n` })
    let at = 0
    for (const oid of oids) {
      const newline = bytes.indexOf(10, at)
      const header = decoder.decode(bytes.subarray(at, newline)).split(' ')
      const size = Number(header[2])
      if (header[1] === 'missing' || !Number.isFinite(size))
        throw new IsoagentError('io', `git object ${oid} is missing`)
      out.set(oid, bytes.slice(newline + 1, newline + 1 + size))
      at = newline + 1 + size + 1
    }
    return out
  }

  async function workFile(path: string): Promise<Uint8Array | undefined> {
    const abs = nodePath.join(root, path)
    try {
      const s = await lstat(abs)
      if (s.isSymbolicLink()) {
        const { readlink } = await import('node:fs/promises')
        return new TextEncoder().encode(await readlink(abs))
      }
      if (!s.isFile()) return undefined
      return new Uint8Array(await readFile(abs))
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
      throw error
    }
  }

  const backend: GitBackend = {
    kind: 'cli',

    withSignal(signal) {
      const state: CallState = { signal, changing: false, finishBy: 0 }
      const started = () => {
        state.finishBy = performance.now() + FINISH_GRACE_MS
      }
      if (signal.aborted) started()
      else signal.addEventListener('abort', started, { once: true })
      return stoppable(cliBackend(root, options, state), state)
    },

    async head() {
      const r = await run(['symbolic-ref', '-q', 'HEAD'])
      const ref = decoder.decode(r.stdout).trim()
      const branch = r.code === 0 && ref.startsWith('refs/heads/') ? ref.slice(11) : null
      return { branch, oid: await headOid() }
    },

    status: statusOf,

    abbreviate,

    async resolveCommit(ref) {
      const r = await run(['rev-parse', '-q', '--verify', '--end-of-options', `${ref}^{commit}`])
      return r.code === 0 ? decoder.decode(r.stdout).trim() : undefined
    },

    async log(start, skip, limit) {
      const format = '%H%x00%P%x00%an%x00%ae%x00%at%x00%ai%x00%cn%x00%ce%x00%ct%x00%ci%x00%B'
      const fields = splitNul(
        await ok([
          'log',
          '-z',
          `--format=${format}`,
          `--skip=${skip}`,
          `-n${limit}`,
          '--end-of-options',
          start,
          '--',
        ]),
      )
      const out: GitCommit[] = []
      const tzOf = (iso: string) => iso.slice(-5)
      for (let i = 0; i + 10 < fields.length + 1; i += 11) {
        const f = fields.slice(i, i + 11)
        if (f.length < 10) break
        out.push({
          oid: f[0]!,
          parents: f[1] === '' ? [] : f[1]!.split(' '),
          author: { name: f[2]!, email: f[3]!, timestamp: Number(f[4]), tz: tzOf(f[5]!) },
          committer: { name: f[6]!, email: f[7]!, timestamp: Number(f[8]), tz: tzOf(f[9]!) },
          message: (f[10] ?? '').replace(/\n+$/, ''),
        })
      }
      return out
    },

    async branches() {
      const lines = (
        await text(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/'])
      )
        .split('\n')
        .filter((l) => l.length > 0)
      return lines
        .map((line): GitBranch => {
          const space = line.indexOf(' ')
          return {
            oid: line.slice(0, space),
            name: line.slice(space + 1).replace(/^refs\/heads\//, ''),
          }
        })
        .sort((a, b) => compareBytes(a.name, b.name))
    },

    async createBranch(name, oid) {
      await ok(['branch', name, oid], { changes: true })
    },

    async treeChanges(from, to) {
      if (from === null) {
        return splitNul(await ok(['ls-tree', '-r', '-z', '--name-only', '--end-of-options', to]))
          .map((path): GitTreeChange => ({ path, inTarget: true }))
          .sort((a, b) => compareBytes(a.path, b.path))
      }
      const parts = splitNul(
        await ok([
          'diff-tree',
          '-r',
          '-z',
          '--no-renames',
          '--name-status',
          '--end-of-options',
          from,
          to,
        ]),
      )
      const out: GitTreeChange[] = []
      for (let i = 0; i + 1 < parts.length; i += 2)
        out.push({ path: parts[i + 1]!, inTarget: parts[i] !== 'D' })
      return out.sort((a, b) => compareBytes(a.path, b.path))
    },

    async checkout(target, signature) {
      const env = who(signature)
      if ('branch' in target)
        await ok(['checkout', '-q', target.branch, '--'], { env, changes: true })
      else
        await ok(['checkout', '-q', '--detach', target.detach, '--'], {
          env,
          changes: true,
        })
    },

    async diff(ref, prefix) {
      // Plumbing (diff-files, diff-index): porcelain `git diff` refreshes and rewrites the index
      // even with --no-optional-locks. Without a refresh, files whose stat changed but whose
      // content did not are listed too; they are dropped below by comparing bytes.
      const args =
        ref === undefined
          ? ['diff-files', '--raw', '-z', '--no-renames', '--abbrev=40', '--ignore-submodules=all']
          : [
              'diff-index',
              '--raw',
              '-z',
              '--no-renames',
              '--abbrev=40',
              '--ignore-submodules=all',
              '--end-of-options',
              ref,
            ]
      args.push('--')
      if (prefix !== '') args.push(prefix)
      const parts = splitNul(await ok(args))
      const rows: {
        path: string
        oldMode: string
        newMode: string
        oldOid: string
        status: string
      }[] = []
      for (let i = 0; i + 1 < parts.length; i += 2) {
        const [oldMode, newMode, oldOid, , status] = parts[i]!.slice(1).split(' ')
        rows.push({
          path: parts[i + 1]!,
          oldMode: oldMode!,
          newMode: newMode!,
          oldOid: oldOid!,
          status: status!,
        })
      }
      const seen = new Set<string>()
      const unique = rows.filter((r) => (seen.has(r.path) ? false : (seen.add(r.path), true)))
      const blobs = await readBlobs([
        ...new Set(
          unique.filter((r) => r.status !== 'U' && r.oldOid !== ZERO_OID).map((r) => r.oldOid),
        ),
      ])
      const out: GitDiffFile[] = []
      for (const r of unique) {
        if (r.status === 'U') {
          out.push({ path: r.path, old: null, new: null, unmerged: true })
          continue
        }
        const old =
          r.oldOid === ZERO_OID || r.oldMode === '000000'
            ? null
            : { mode: r.oldMode, oid: r.oldOid, data: blobs.get(r.oldOid)! }
        const data = r.newMode === '000000' ? undefined : await workFile(r.path)
        const side = data === undefined ? null : { mode: r.newMode, data }
        if (old === null && side === null) continue
        if (
          old !== null &&
          side !== null &&
          old.mode === side.mode &&
          sameBytes(old.data, side.data)
        )
          continue
        out.push({ path: r.path, old, new: side })
      }
      return out.sort((a, b) => compareBytes(a.path, b.path))
    },

    async stashList() {
      const r = await run(['stash', 'list', '--format=%gs'])
      if (r.code !== 0) return []
      return decoder
        .decode(r.stdout)
        .split('\n')
        .filter((l) => l.length > 0)
    },

    async stashPush(message, _indexMessage, signature) {
      const env = who(signature)
      const oid = decoder.decode(await ok(['stash', 'create'], { env })).trim()
      if (oid === '') throw new IsoagentError('invalid_argument', 'No local changes to save')
      await ok(['stash', 'store', '-m', message, oid], { env, changes: true })
      await ok(['reset', '--hard', '-q'], { env, changes: true })
      return oid
    },

    async stashPop() {
      const oid = (await text(['rev-parse', '-q', '--verify', 'refs/stash'])).trim()
      const r = await run(['stash', 'pop', '-q'], { changes: true })
      if (r.code !== 0) {
        const files = [...r.stderr.matchAll(/^\t(.+)$/gm)].map((m) => m[1]!)
        throw new IsoagentError(
          'version_conflict',
          `stash pop refused: local changes to ${files.join(', ') || 'some files'} would be overwritten; commit or stash them first`,
          { data: { path: files[0] ?? '', expected: 'clean', actual: 'modified', paths: files } },
        )
      }
      return oid
    },

    async remotes() {
      const r = await run(['config', '-z', '--get-regexp', '^remote\\..*\\.url$'])
      if (r.code !== 0) return []
      return splitNul(r.stdout)
        .map((entry): GitRemote => {
          const newline = entry.indexOf('\n')
          const key = entry.slice(0, newline)
          return {
            name: key.slice('remote.'.length, -'.url'.length),
            url: entry.slice(newline + 1),
          }
        })
        .sort((a, b) => compareBytes(a.name, b.name))
    },

    async worktrees() {
      const records = splitNul(await ok(['worktree', 'list', '--porcelain', '-z']))
      const out: GitWorktree[] = []
      let current: GitWorktree | undefined
      for (const line of records) {
        if (line.startsWith('worktree ')) {
          current = { path: line.slice(9), head: null, branch: null, main: out.length === 0 }
          out.push(current)
        } else if (current !== undefined && line.startsWith('HEAD ')) {
          const oid = line.slice(5)
          current.head = oid === ZERO_OID ? null : oid
        } else if (current !== undefined && line.startsWith('branch ')) {
          current.branch = line.slice(7).replace(/^refs\/heads\//, '')
        }
      }
      return out
    },

    async init(defaultBranch) {
      await ok(['init', '-q', `--initial-branch=${defaultBranch}`], { changes: true })
    },

    async add(prefix) {
      const before = (await statusOf()).entries.filter(
        (e) => prefix === '' || e.path === prefix || e.path.startsWith(`${prefix}/`),
      )
      const planned = new Map<string, GitAddedPath>()
      for (const e of before) {
        if (e.worktree === ' ') continue
        const action = e.worktree === 'D' ? 'remove' : 'add'
        if (e.index === 'U' || e.worktree === 'U' || e.index === e.worktree) {
          const exists = (await workFile(e.path)) !== undefined
          planned.set(e.path, { path: e.path, action: exists ? 'add' : 'remove' })
        } else planned.set(e.path, { path: e.path, action })
      }
      // Nothing to stage (also: an ignored path, which `git add` would refuse): as isomorphic-git.
      if (planned.size === 0) return []
      await ok(['add', '-A', '--', prefix === '' ? '.' : prefix], { changes: true })
      return [...planned.values()].sort((a, b) => compareBytes(a.path, b.path))
    },

    async commit(message, signature) {
      await ok(
        ['commit', '-q', '--no-verify', '--cleanup=verbatim', '--allow-empty-message', '-F', '-'],
        { input: message, env: who(signature), changes: true },
      )
      return (await text(['rev-parse', 'HEAD'])).trim()
    },
  }
  return backend
}

/**
 * `backend` whose operations, once the call's signal has aborted, never resolve with what they
 * read: unless the call has begun changing the repository, they reject with the stop reason.
 */
function stoppable(backend: GitBackend, call: CallState): GitBackend {
  // No git starts once stopped (`mayStart`); what ran before the stop is discarded.
  const signal = call.signal!
  return stoppableGitBackend(backend, signal, () => signal.aborted && !call.changing)
}
