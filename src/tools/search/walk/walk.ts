import { IsoagentError } from '../../../errors.ts'
import { decodeUtf8 } from '../../../text/bytes.ts'
import { WorkspacePath } from '../../../workspace/workspace-path.ts'
import type {
  DirEntry,
  WorkspaceServices,
  WorkspaceStat,
} from '../../../workspace/workspace-services.ts'
import type { Ignore } from 'ignore'
import { compileIgnore, ignoreDecision, IGNORE_FILES, type IgnoreLevel } from './ignore-rules.ts'
import { compareNames } from './path-order.ts'
import { LIST_PAGE, LIST_PREFETCH } from '../tuning.ts'

/** Why the walk passed something by. */
export interface WalkSkips {
  /** Directories that could not be listed (permissions, vanished). */
  unreadable_dirs: number
  /** Ignore files that could not be read or decoded. */
  unreadable_ignore_files: number
}

/** What a walk reads through: listings, stats and ignore files, at once where it can. */
export type WalkSource = Pick<WorkspaceServices, 'list' | 'stat' | 'read' | 'listNow' | 'readNow'>

/**
 * Ignore levels of directories above the units of one larger walk, shared by the walks of those
 * units: each is read once, by the first unit below it.
 */
export type SharedLevels = Map<WorkspacePath, IgnoreLevel | Promise<IgnoreLevel>>

/** Options of {@link walkFiles}. */
export interface WalkOptions {
  /** Start here (a directory, or a single file). */
  start: WorkspacePath
  signal?: AbortSignal
  /** Visit only files sorting after this path in walk order (cursor resume). */
  after?: string
  /** Include the file at `after` itself. */
  inclusive?: boolean
  /** Keep the backend's listing order instead of sorting siblings by name. */
  backendOrder?: boolean
  /** Enter a directory only when this says it can hold a wanted file. */
  enter?: (dir: WorkspacePath) => boolean
  skips: WalkSkips
  /**
   * Hand over directories to walk elsewhere: a directory the walk would enter, after the cursor,
   * for which this returns true is yielded as a {@link WalkUnit} (in its place in walk order)
   * instead of being entered.
   */
  delegate?: (dir: WorkspacePath) => boolean
  /**
   * This walk is one unit of a larger walk that went through the start's ancestors already:
   * their ignore levels are shared through this cache, and what reading them skipped is not
   * counted again. The larger walk saw the start as a directory: if it is none now (gone, or
   * replaced by a file), it counts as an unreadable directory and nothing is yielded.
   */
  unitOf?: SharedLevels
}

/** A directory handed over by {@link WalkOptions.delegate}. */
export interface WalkUnit {
  unit: WorkspacePath
}

/** What a walk gives: a file, or a directory handed over whole. */
export type WalkItem = WorkspacePath | WalkUnit

/**
 * What the walk asks of the workspace. The walk itself is a synchronous generator that yields
 * these and is resumed with the answer (or thrown the failure): where the workspace answers at
 * once (`listNow`, `readNow`) the whole walk runs without a pause, elsewhere each request is
 * awaited. One algorithm either way.
 */
type Request =
  /** Every entry of a directory (all pages). */
  | { op: 'list'; path: WorkspacePath }
  /** A directory the walk will list soon: a hint, answered with nothing. */
  | { op: 'prefetch'; path: WorkspacePath }
  | { op: 'read'; path: WorkspacePath }
  | { op: 'stat'; path: WorkspacePath }
  /** The ignore level of a directory above the start, from {@link WalkOptions.unitOf}. */
  | { op: 'level'; dir: WorkspacePath }

type Steps<Y, R> = Generator<Request | Y, R, unknown>
type Answer = { value: unknown } | { error: unknown }
const EMPTY_SKIPS = (): WalkSkips => ({ unreadable_dirs: 0, unreadable_ignore_files: 0 })

function isRequest(value: unknown): value is Request {
  return typeof value === 'object' && value !== null && 'op' in value
}

/** Answers a walk's requests through a workspace: at once where it can, else asynchronously. */
class WalkIo {
  /**
   * Whether listings are worth fetching ahead: they cannot be had at once (no `listNow`, or one
   * that has declined a listing).
   */
  prefetching: boolean
  private readonly ahead = new Map<WorkspacePath, Promise<DirEntry[]>>()

  constructor(
    private readonly ws: WalkSource,
    private readonly shared: SharedLevels | undefined,
  ) {
    this.prefetching = ws.listNow === undefined
  }

  /** The answer at once, or undefined when it must be waited for ({@link WalkIo.later}). */
  now(request: Request): Answer | undefined {
    try {
      switch (request.op) {
        case 'list': {
          if (this.ahead.has(request.path)) return undefined
          const entries = this.listNow(request.path)
          if (entries !== undefined) return { value: entries }
          this.prefetching = true
          return undefined
        }
        case 'prefetch':
          if (this.ahead.size < LIST_PREFETCH && !this.ahead.has(request.path)) {
            const listing = this.listAll(request.path)
            listing.catch(() => {})
            this.ahead.set(request.path, listing)
          }
          return { value: undefined }
        case 'read': {
          const bytes = this.ws.readNow?.(request.path)
          return bytes === undefined ? undefined : { value: bytes }
        }
        case 'stat':
          return undefined
        case 'level': {
          const level = this.sharedLevel(request.dir)
          return level instanceof Promise ? undefined : { value: level }
        }
      }
    } catch (error) {
      return { error }
    }
  }

  /** The answer, waited for. */
  async later(request: Request): Promise<Answer> {
    try {
      switch (request.op) {
        case 'list': {
          const listing = this.ahead.get(request.path)
          this.ahead.delete(request.path)
          return { value: await (listing ?? this.listAll(request.path)) }
        }
        case 'read':
          return { value: await this.ws.read(request.path) }
        case 'stat':
          return { value: await this.ws.stat(request.path) }
        case 'level':
          return { value: await this.sharedLevel(request.dir) }
        case 'prefetch':
          return { value: undefined }
      }
    } catch (error) {
      return { error }
    }
  }

  /** Every entry of `dir` at once, as {@link WalkIo.listAll} gives them; undefined if declined. */
  private listNow(dir: WorkspacePath): DirEntry[] | undefined {
    if (this.ws.listNow === undefined) return undefined
    const out: DirEntry[] = []
    let after: string | undefined
    for (;;) {
      const page = this.ws.listNow(dir, { after, limit: LIST_PAGE })
      if (page === undefined) return undefined
      // One page (most directories): its own array, no copy.
      if (after === undefined && page.next === undefined) return page.entries
      out.push(...page.entries)
      if (page.next === undefined) return out
      after = page.next
    }
  }

  private async listAll(dir: WorkspacePath): Promise<DirEntry[]> {
    const out: DirEntry[] = []
    let after: string | undefined
    for (;;) {
      const page = await this.ws.list(dir, { after, limit: LIST_PAGE })
      out.push(...page.entries)
      if (page.next === undefined) return out
      after = page.next
    }
  }

  /** The shared level of `dir`, read (by this walk) when no unit has read it yet. */
  private sharedLevel(dir: WorkspacePath): IgnoreLevel | Promise<IgnoreLevel> {
    const cache = this.shared!
    const cached = cache.get(dir)
    if (cached !== undefined) return cached
    // What reading it skipped was counted by the larger walk.
    const level = drive(this, ancestorLevel(dir, EMPTY_SKIPS()))
    cache.set(dir, level)
    if (level instanceof Promise)
      level.then(
        (value) => {
          if (cache.get(dir) === level) cache.set(dir, value)
        },
        () => {},
      )
    return level
  }
}

/**
 * Run `steps` until they give something that is not a request, or end: at once while `io`
 * answers at once, else as a promise.
 */
function advance<Y, R>(
  io: WalkIo,
  steps: Steps<Y, R>,
  answer?: Answer,
): IteratorResult<Y, R> | Promise<IteratorResult<Y, R>> {
  let step =
    answer === undefined
      ? steps.next()
      : 'error' in answer
        ? steps.throw(answer.error)
        : steps.next(answer.value)
  while (!step.done && isRequest(step.value)) {
    const request: Request = step.value
    const now = io.now(request)
    if (now === undefined) return io.later(request).then((later) => advance(io, steps, later))
    step = 'error' in now ? steps.throw(now.error) : steps.next(now.value)
  }
  return step as IteratorResult<Y, R>
}

/** The result of steps that only ask, at once where `io` answers at once. */
function drive<R>(io: WalkIo, steps: Steps<never, R>): R | Promise<R> {
  const done = advance(io, steps)
  return done instanceof Promise ? done.then((d) => d.value as R) : (done.value as R)
}

function* readIgnore(path: WorkspacePath, skips: WalkSkips): Steps<never, Ignore | undefined> {
  try {
    const bytes = (yield { op: 'read', path }) as Uint8Array
    return compileIgnore(decodeUtf8(bytes, path))
  } catch {
    skips.unreadable_ignore_files++
    return undefined
  }
}

/** The ignore level of `dir`, whose entries are `entries`. */
function* levelFor(
  dir: WorkspacePath,
  entries: readonly DirEntry[],
  skips: WalkSkips,
): Steps<never, IgnoreLevel> {
  const matchers: (Ignore | undefined)[] = IGNORE_FILES.map(() => undefined)
  let present: Set<string> | undefined
  for (const entry of entries)
    if (entry.name.charCodeAt(0) === 0x2e) (present ??= new Set()).add(entry.name)
  if (present === undefined) return { base: dir, matchers, hasGit: false }
  for (let k = 0; k < IGNORE_FILES.length; k++)
    if (present.has(IGNORE_FILES[k]!))
      matchers[k] = yield* readIgnore(WorkspacePath.child(dir, IGNORE_FILES[k]!), skips)
  const hasGit = present.has('.git')
  let exclude: Ignore | undefined
  if (hasGit) {
    const path = WorkspacePath.child(dir, '.git/info/exclude')
    let stat: WorkspaceStat | undefined
    try {
      stat = (yield { op: 'stat', path }) as WorkspaceStat | undefined
    } catch {
      stat = undefined
    }
    if (stat?.kind === 'file') exclude = yield* readIgnore(path, skips)
  }
  return { base: dir, matchers, hasGit, ...(exclude ? { exclude } : {}) }
}

/** The ignore level of a directory above the start (an unlistable one has no rules). */
function* ancestorLevel(dir: WorkspacePath, skips: WalkSkips): Steps<never, IgnoreLevel> {
  let entries: DirEntry[]
  try {
    entries = (yield { op: 'list', path: dir }) as DirEntry[]
  } catch {
    entries = []
  }
  return yield* levelFor(dir, entries, skips)
}

/** Whether a level can decide anything (rules, or a repository boundary). */
function matters(level: IgnoreLevel): boolean {
  return level.hasGit || level.exclude !== undefined || level.matchers.some((m) => m !== undefined)
}

/**
 * Whether `path`'s relation to `after` lets the walk skip it: files at or before `after` in walk
 * order are skipped; directories that cannot contain anything after it are not entered.
 */
function before(
  path: string,
  after: string | undefined,
  isDir: boolean,
  inclusive = false,
): boolean {
  if (after === undefined) return false
  if (isDir) {
    if (after.startsWith(path + '/')) return false
    return comparePaths(path, after) < 0
  }
  const c = comparePaths(path, after)
  return inclusive ? c < 0 : c <= 0
}

/** Walk order of two paths: segment by segment, by code point. */
export function comparePaths(a: string, b: string): number {
  const x = a.split('/')
  const y = b.split('/')
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const c = compareNames(x[i]!, y[i]!)
    if (c !== 0) return c
  }
  return x.length - y.length
}

/**
 * Every file a search sees, in ripgrep's `--sort path` order (depth first, siblings by name):
 * hidden entries and `.git` skipped (unless an ignore file's `!` rule re-includes them, as
 * ripgrep does), `.rgignore`/`.ignore`/`.gitignore`/`.git/info/exclude` respected at every
 * depth, symlinks never followed. Everything goes through the workspace port.
 */
export function walkFiles(
  ws: WalkSource,
  options: WalkOptions & { delegate: (dir: WorkspacePath) => boolean },
): AsyncGenerator<WalkItem>
export function walkFiles(ws: WalkSource, options: WalkOptions): AsyncGenerator<WorkspacePath>
export async function* walkFiles(ws: WalkSource, options: WalkOptions): AsyncGenerator<WalkItem> {
  const walk = new Walk(ws, options)
  try {
    for (;;) {
      let item = walk.step()
      if (item instanceof Promise) item = await item
      if (item === undefined) return
      yield item
    }
  } finally {
    walk.close()
  }
}

/**
 * Whether a walk from `options.start` gives the file `path`: it is below the start, in
 * directories `options.enter` admits, and neither hidden nor ignored. Only `path`'s ancestors
 * are listed; what could not be read is counted in `options.skips`.
 */
export async function walkSees(
  ws: WalkSource,
  options: Pick<WalkOptions, 'start' | 'enter' | 'signal' | 'skips'>,
  path: WorkspacePath,
): Promise<boolean> {
  const { enter } = options
  const walk = new Walk(ws, {
    ...options,
    after: path,
    inclusive: true,
    // Into `path`'s ancestors only.
    enter: (dir) =>
      (dir === '' || path.startsWith(`${dir}/`)) && (enter === undefined || enter(dir)),
  })
  try {
    let first = walk.step()
    if (first instanceof Promise) first = await first
    return first === path
  } finally {
    walk.close()
  }
}

/**
 * The walk of {@link walkFiles}, stepped by its consumer: each {@link Walk.step} gives the next
 * item at once while the workspace answers at once (`listNow`, `readNow`), and a promise of it
 * only where something must be waited for. A consumer that takes files one at a time from a
 * local disk or memory pays no promise per file.
 */
export class Walk {
  private readonly io: WalkIo
  private readonly steps: Steps<WalkItem, void>
  private closed = false

  constructor(ws: WalkSource, options: WalkOptions) {
    this.io = new WalkIo(ws, options.unitOf)
    this.steps = walkSteps(options, this.io)
  }

  /**
   * The next file or handed-over directory, or undefined at the end: at once, or a promise when
   * the walk must wait. Await a promise before the next step. Throws (or rejects with) what the
   * walk fails with: `not_found` for a missing start, `cancelled` once the signal is aborted.
   */
  step(): WalkItem | undefined | Promise<WalkItem | undefined> {
    if (this.closed) return undefined
    const next = advance(this.io, this.steps)
    if (!(next instanceof Promise)) return next.value ?? undefined
    // A consumer may hand on what it has before it awaits this, and stop meanwhile: a failure
    // nobody is left to see (the walk closed, or cancelled) must not go unhandled.
    const later = next.then(
      (n) => (this.closed ? undefined : (n.value ?? undefined)),
      (error: unknown) => {
        if (this.closed) return undefined
        throw error
      },
    )
    later.catch(() => {})
    return later
  }

  /** End the walk early: the next step, and one still waiting, give undefined. */
  close(): void {
    this.closed = true
    this.steps.return()
  }
}

/** The walk itself; `io` says whether prefetch hints are worth yielding. */
function* walkSteps(
  options: WalkOptions,
  io: { readonly prefetching: boolean },
): Steps<WalkItem, void> {
  const { start, signal, skips, inclusive, backendOrder } = options
  const after = backendOrder ? undefined : options.after
  let stat: WorkspaceStat | undefined
  try {
    stat = (yield { op: 'stat', path: start }) as WorkspaceStat | undefined
  } catch (error) {
    if (options.unitOf === undefined) throw error
    stat = undefined
  }
  if (options.unitOf !== undefined && stat?.kind !== 'directory') {
    skips.unreadable_dirs++
    return
  }
  if (stat === undefined)
    throw new IsoagentError('not_found', `path not found: ${WorkspacePath.display(start)}`, {
      data: { path: start },
    })
  if (stat.kind === 'file') {
    if (!before(start, after, false, inclusive)) yield start
    return
  }
  // Ignore rules of the directories above the start apply too. Only levels that can decide
  // anything are kept: most directories have no ignore file.
  const levels: IgnoreLevel[] = []
  const ancestors: WorkspacePath[] = []
  for (let p = start; p !== ''; p = WorkspacePath.parent(p))
    ancestors.unshift(WorkspacePath.parent(p))
  for (const dir of ancestors) {
    const level =
      options.unitOf === undefined
        ? yield* ancestorLevel(dir, skips)
        : ((yield { op: 'level', dir }) as IgnoreLevel)
    if (matters(level)) levels.push(level)
  }

  interface Frame {
    /** What the walk sees of the directory, in walk order, and which of it are directories. */
    paths: WorkspacePath[]
    isDir: boolean[]
    next: number
    /** Whether this directory's level is on `levels`. */
    level: boolean
  }
  /** List `dir` and decide what of it the walk sees; undefined when it cannot be listed. */
  function* open(dir: WorkspacePath): Steps<never, Frame | undefined> {
    if (signal?.aborted) throw new IsoagentError('cancelled', 'search cancelled')
    let entries: DirEntry[]
    try {
      entries = (yield { op: 'list', path: dir }) as DirEntry[]
    } catch {
      skips.unreadable_dirs++
      return undefined
    }
    const level = yield* levelFor(dir, entries, skips)
    const kept = matters(level)
    if (kept) levels.push(level)
    if (!backendOrder && !inOrder(entries))
      entries = [...entries].sort((a, b) => compareNames(a.name, b.name))
    const paths: WorkspacePath[] = []
    const dirs: boolean[] = []
    for (const entry of entries) {
      if (entry.kind !== 'file' && entry.kind !== 'directory') continue
      const path = WorkspacePath.child(dir, entry.name)
      const isDir = entry.kind === 'directory'
      if (resumeAfter !== undefined && before(path, resumeAfter, isDir, inclusive)) continue
      const decision = levels.length === 0 ? undefined : ignoreDecision(levels, path, isDir)
      if (decision === 'ignore') continue
      // Hidden entries are skipped unless an ignore file re-includes them (`!.github/`).
      if (entry.name.charCodeAt(0) === 0x2e && decision !== 'whitelist') continue
      if (isDir && options.enter !== undefined && !options.enter(path)) continue
      paths.push(path)
      dirs.push(isDir)
    }
    if (io.prefetching)
      for (let k = 0; k < paths.length; k++)
        if (dirs[k] && !options.delegate?.(paths[k]!)) yield { op: 'prefetch', path: paths[k]! }
    return { paths, isDir: dirs, next: 0, level: kept }
  }
  // Depth first with an explicit stack: one generator, however deep the tree.
  const stack: Frame[] = []
  /** The cursor position until the walk is past it; then everything ahead is after it. */
  let resumeAfter = after
  const root = yield* open(start)
  if (root !== undefined) stack.push(root)
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!
    const k = top.next++
    if (k >= top.paths.length) {
      stack.pop()
      if (top.level) levels.pop()
      continue
    }
    const path = top.paths[k]!
    if (!top.isDir[k]) {
      resumeAfter = undefined
      yield path
      continue
    }
    if (resumeAfter !== undefined && !resumeAfter.startsWith(path + '/')) resumeAfter = undefined
    if (resumeAfter === undefined && options.delegate?.(path)) {
      yield { unit: path }
      continue
    }
    const frame = yield* open(path)
    if (frame !== undefined) stack.push(frame)
  }
}

/** Whether siblings are in walk order already (listings usually are). */
function inOrder(entries: readonly DirEntry[]): boolean {
  for (let i = 1; i < entries.length; i++)
    if (compareNames(entries[i - 1]!.name, entries[i]!.name) > 0) return false
  return true
}
