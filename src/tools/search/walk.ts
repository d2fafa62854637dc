import { IsoagentError } from '../../errors.ts'
import { decodeUtf8 } from '../../text/bytes.ts'
import { WorkspacePath } from '../../workspace/workspace-path.ts'
import type { DirEntry, WorkspaceServices } from '../../workspace/workspace-services.ts'
import { compileIgnore, ignoreDecision, IGNORE_FILES, type IgnoreLevel } from './ignore-rules.ts'
import { compareNames } from './path-order.ts'

/** Why the walk passed something by. */
export interface WalkSkips {
  /** Directories that could not be listed (permissions, vanished). */
  unreadable_dirs: number
  /** Ignore files that could not be read or decoded. */
  unreadable_ignore_files: number
}

/** What a walk reads through: listings, stats and ignore files. */
export type WalkSource = Pick<WorkspaceServices, 'list' | 'stat' | 'read'>

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
  unitOf?: Map<WorkspacePath, Promise<IgnoreLevel>>
}

/** A directory handed over by {@link WalkOptions.delegate}. */
export interface WalkUnit {
  unit: WorkspacePath
}

const PAGE = 1000
/** Directory listings fetched ahead of the walk, at most. */
const PREFETCH = 32

async function listAll(ws: WalkSource, dir: WorkspacePath): Promise<DirEntry[]> {
  const out: DirEntry[] = []
  let after: string | undefined
  for (;;) {
    const page = await ws.list(dir, { after, limit: PAGE })
    out.push(...page.entries)
    if (page.next === undefined) return out
    after = page.next
  }
}

async function readIgnore(ws: WalkSource, path: WorkspacePath, skips: WalkSkips) {
  try {
    return compileIgnore(decodeUtf8(await ws.read(path), path))
  } catch {
    skips.unreadable_ignore_files++
    return undefined
  }
}

async function levelFor(
  ws: WalkSource,
  dir: WorkspacePath,
  names: Set<string>,
  skips: WalkSkips,
): Promise<IgnoreLevel> {
  const matchers = await Promise.all(
    IGNORE_FILES.map((f) =>
      names.has(f)
        ? readIgnore(ws, WorkspacePath.child(dir, f), skips)
        : Promise.resolve(undefined),
    ),
  )
  const hasGit = names.has('.git')
  let exclude
  if (hasGit) {
    const path = WorkspacePath.child(dir, '.git/info/exclude')
    const stat = await ws.stat(path).catch(() => undefined)
    if (stat?.kind === 'file') exclude = await readIgnore(ws, path, skips)
  }
  return { base: dir, matchers, hasGit, ...(exclude ? { exclude } : {}) }
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
): AsyncGenerator<WorkspacePath | WalkUnit>
export function walkFiles(ws: WalkSource, options: WalkOptions): AsyncGenerator<WorkspacePath>
export async function* walkFiles(
  ws: WalkSource,
  options: WalkOptions,
): AsyncGenerator<WorkspacePath | WalkUnit> {
  const { start, signal, skips, inclusive, backendOrder } = options
  const after = backendOrder ? undefined : options.after
  const stat = await ws.stat(start).catch((error: unknown) => {
    if (options.unitOf === undefined) throw error
    return undefined
  })
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
  // Ignore rules of the directories above the start apply too.
  const levels: IgnoreLevel[] = []
  const ancestors: WorkspacePath[] = []
  for (let p = start; p !== ''; p = WorkspacePath.parent(p))
    ancestors.unshift(WorkspacePath.parent(p))
  const ancestorLevel = async (dir: WorkspacePath, counted: WalkSkips) => {
    const names = new Set((await listAll(ws, dir).catch(() => [] as DirEntry[])).map((e) => e.name))
    return levelFor(ws, dir, names, counted)
  }
  for (const dir of ancestors) {
    const cache = options.unitOf
    if (cache === undefined) {
      levels.push(await ancestorLevel(dir, skips))
      continue
    }
    let level = cache.get(dir)
    if (level === undefined) {
      level = ancestorLevel(dir, { unreadable_dirs: 0, unreadable_ignore_files: 0 })
      cache.set(dir, level)
    }
    levels.push(await level)
  }

  // Listings of directories about to be entered, fetched ahead so their I/O overlaps the walk.
  const ahead = new Map<WorkspacePath, Promise<DirEntry[]>>()
  const prefetch = (dir: WorkspacePath) => {
    if (ahead.size >= PREFETCH || ahead.has(dir)) return
    const listing = listAll(ws, dir)
    listing.catch(() => {})
    ahead.set(dir, listing)
  }
  interface Frame {
    items: { path: WorkspacePath; isDir: boolean }[]
    next: number
  }
  /** List `dir` and decide what of it the walk sees; undefined when it cannot be listed. */
  async function open(dir: WorkspacePath): Promise<Frame | undefined> {
    if (signal?.aborted) throw new IsoagentError('cancelled', 'search cancelled')
    let entries: DirEntry[]
    try {
      const listing = ahead.get(dir)
      ahead.delete(dir)
      entries = await (listing ?? listAll(ws, dir))
    } catch {
      skips.unreadable_dirs++
      return undefined
    }
    const names = new Set(entries.map((e) => e.name))
    levels.push(await levelFor(ws, dir, names, skips))
    if (!backendOrder) entries.sort((a, b) => compareNames(a.name, b.name))
    const items: Frame['items'] = []
    for (const entry of entries) {
      if (entry.kind !== 'file' && entry.kind !== 'directory') continue
      const path = WorkspacePath.child(dir, entry.name)
      const isDir = entry.kind === 'directory'
      if (before(path, resumeAfter, isDir, inclusive)) continue
      const decision = ignoreDecision(levels, path, isDir)
      if (decision === 'ignore') continue
      // Hidden entries are skipped unless an ignore file re-includes them (`!.github/`).
      if (entry.name.startsWith('.') && decision !== 'whitelist') continue
      if (isDir && options.enter !== undefined && !options.enter(path)) continue
      items.push({ path, isDir })
    }
    for (const item of items) if (item.isDir && !options.delegate?.(item.path)) prefetch(item.path)
    return { items, next: 0 }
  }
  // Depth first with an explicit stack: one generator, however deep the tree.
  const stack: Frame[] = []
  /** The cursor position until the walk is past it; then everything ahead is after it. */
  let resumeAfter = after
  const root = await open(start)
  if (root !== undefined) stack.push(root)
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!
    const item = top.items[top.next++]
    if (item === undefined) {
      stack.pop()
      levels.pop()
      continue
    }
    if (!item.isDir) {
      resumeAfter = undefined
      yield item.path
      continue
    }
    if (resumeAfter !== undefined && !resumeAfter.startsWith(item.path + '/'))
      resumeAfter = undefined
    if (resumeAfter === undefined && options.delegate?.(item.path)) {
      yield { unit: item.path }
      continue
    }
    const frame = await open(item.path)
    if (frame !== undefined) stack.push(frame)
  }
}
