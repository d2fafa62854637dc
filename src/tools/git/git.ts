import { IsoagentError } from '../../errors.ts'
import { decodeCursor, encodeCursor } from '../../paging/cursor.ts'
import { toolFailure, toolSuccess, type ToolResult } from '../../tool-result.ts'
import type { GitBackend, GitCommit, GitSignature } from '../../workspace/git-backend.ts'
import { WorkspacePath } from '../../workspace/workspace-path.ts'
import type { WorkspaceServices } from '../../workspace/workspace-services.ts'
import { MUTATING, type ToolContext, type ToolSpec } from '../../kernel/tool-spec.ts'
import { workspaceGitFs } from './fs-bridge.ts'
import {
  diffOids,
  formatBranch,
  formatCommit,
  formatDetached,
  formatDiffFile,
  formatRemote,
  formatStatusEntry,
  formatStatusHeader,
  formatWorktrees,
  subjectOf,
  ZERO_OID,
  type Abbrev,
  type DiffFileSummary,
} from './git-format.ts'
import { compareBytes, isValidBranchName, tzOfOffset } from './git-text.ts'
import { lazyIsomorphicGitBackend } from './lazy-backend.ts'

/** Who commits (and stashes) through the `git` tool. */
export interface GitAuthor {
  name: string
  email: string
}

/** The author used when the session names none. */
export const DEFAULT_GIT_AUTHOR: GitAuthor = { name: 'isoagent', email: 'isoagent@localhost' }

/** Branch `init` creates. */
export const GIT_DEFAULT_BRANCH = 'main'

/** Page sizes of the `git` tool: `log` 10, other listings 50, at most 200. */
export const GIT_LIMIT = { log: 10, default: 50, max: 200 } as const

/** Byte window of `diff`: default 65536, 256..102400. */
export const GIT_DIFF_BYTES = { default: 65536, min: 256, max: 102400 } as const

/** The commands of the `git` tool. */
export const GIT_COMMANDS = [
  'status',
  'log',
  'diff',
  'branch',
  'checkout',
  'stash',
  'remote',
  'worktree',
  'init',
  'add',
  'commit',
] as const

interface GitArgs {
  command: (typeof GIT_COMMANDS)[number]
  ref?: string
  path?: string
  name?: string
  new_branch?: boolean
  subcommand?: 'push' | 'pop' | 'list'
  message?: string
  limit?: number
  cursor?: string
  byte_offset?: number
  max_bytes?: number
}

const backends = new WeakMap<WorkspaceServices, GitBackend>()

/**
 * The git backend serving `workspace`: its own (`gitFs`, the CLI on local disk) or isomorphic-git
 * over the workspace port.
 */
export function gitBackendOf(workspace: WorkspaceServices): GitBackend {
  if (workspace.gitFs !== undefined) return workspace.gitFs
  let backend = backends.get(workspace)
  if (backend === undefined) {
    backend = lazyIsomorphicGitBackend({
      fs: workspaceGitFs(workspace),
      dir: '/',
      displayRoot: workspace.capabilities.localRoot ?? '/',
    })
    backends.set(workspace, backend)
  }
  return backend
}

const invalid = (message: string, data: Record<string, unknown> = {}) =>
  new IsoagentError('invalid_argument', message, { data })

function unknownRef(ref: string): IsoagentError {
  return new IsoagentError('not_found', `unknown revision or ref: ${ref}`, { data: { ref } })
}

function signature(author: GitAuthor): GitSignature {
  return {
    name: author.name,
    email: author.email,
    timestamp: Math.floor(Date.now() / 1000),
    tz: tzOfOffset(new Date().getTimezoneOffset()),
  }
}

/** One page of `items` after an offset cursor of listing `kind`. */
function page<T>(
  kind: string,
  items: T[],
  limit: number,
  cursor: string | undefined,
): { items: T[]; offset: number; next: string | null } {
  let offset = 0
  if (cursor !== undefined) {
    const position = decodeCursor(kind, cursor)
    if (typeof position.o !== 'number' || !Number.isInteger(position.o) || position.o < 0)
      throw invalid('invalid cursor: not a position of this listing')
    offset = position.o
  }
  const slice = items.slice(offset, offset + limit)
  const end = offset + slice.length
  return { items: slice, offset, next: end < items.length ? encodeCursor(kind, { o: end }) : null }
}

/** Continuation line for a paged listing. */
const more = (next: string | null) =>
  next === null ? [] : [`... (more entries; continue with cursor="${next}")`]

class GitRun {
  constructor(
    readonly args: GitArgs,
    readonly context: ToolContext,
    readonly backend: GitBackend,
    readonly author: GitAuthor,
  ) {}

  get limit(): number {
    return this.args.limit ?? (this.args.command === 'log' ? GIT_LIMIT.log : GIT_LIMIT.default)
  }

  /** A pathspec prefix from `path` ('' for the whole repository), contained in the workspace. */
  prefix(): string {
    if (this.args.path === undefined) return ''
    return this.context.path(this.args.path)
  }

  /** The commit `ref` names; `~N` and `^N` suffixes walk to ancestors, as in git. */
  async commitOf(ref: string): Promise<string> {
    const direct = await this.backend.resolveCommit(ref)
    if (direct !== undefined) return direct
    const m = /^(.+?)((?:[~^]\d*)+)$/.exec(ref)
    if (m === null) throw unknownRef(ref)
    const baseOid = await this.backend.resolveCommit(m[1]!)
    if (baseOid === undefined) throw unknownRef(ref)
    let oid: string = baseOid
    for (const step of m[2]!.matchAll(/([~^])(\d*)/g)) {
      const n = step[2] === '' ? 1 : Number(step[2])
      if (n > 100000) throw unknownRef(ref)
      const walk = step[1] === '~' ? n : 1
      const parentIndex = step[1] === '^' ? n - 1 : 0
      if (step[1] === '^' && n === 0) continue
      for (let i = 0; i < walk; i++) {
        const commit: GitCommit | undefined = (await this.backend.log(oid, 0, 1))[0]
        const parent: string | undefined = commit?.parents[i === walk - 1 ? parentIndex : 0]
        if (parent === undefined) throw unknownRef(ref)
        oid = parent
      }
    }
    return oid
  }

  /** git's abbreviation of each of `oids`, as a lookup. */
  async abbrev(oids: readonly (string | null)[]): Promise<Abbrev> {
    const wanted = [...new Set(oids.filter((oid): oid is string => oid !== null))]
    const shorts = await this.backend.abbreviate(wanted)
    const map = new Map(wanted.map((oid, i) => [oid, shorts[i]!]))
    return (oid) => map.get(oid) ?? oid
  }

  /** git's abbreviation of `oid`. */
  async short(oid: string): Promise<string> {
    return (await this.abbrev([oid]))(oid)
  }

  result(output: string, metadata: Record<string, unknown>): ToolResult {
    return toolSuccess('git', output, {
      command: this.args.command,
      backend: this.backend.kind,
      ...metadata,
    })
  }

  async status(): Promise<ToolResult> {
    const { head, upstream, entries } = await this.backend.status()
    const all = sortStatus(entries)
    const { items, next } = page('git.status', all, this.limit, this.args.cursor)
    const header = formatStatusHeader(head, upstream)
    const lines = [header, ...items.map(formatStatusEntry), ...more(next)]
    return this.result(lines.join('\n'), {
      branch: head.branch,
      head: head.oid,
      detached: head.branch === null,
      upstream,
      clean: all.length === 0,
      total: all.length,
      entries: items,
      truncated: next !== null,
      next_cursor: next,
    })
  }

  async log(): Promise<ToolResult> {
    let start: string
    let skip = 0
    if (this.args.cursor !== undefined) {
      const position = decodeCursor('git.log', this.args.cursor)
      // Both ids must be full object ids: a cursor is caller input and reaches `git log`.
      const oid = /^[0-9a-f]{40}$/
      if (
        typeof position.s !== 'string' ||
        typeof position.n !== 'string' ||
        !oid.test(position.s) ||
        !oid.test(position.n) ||
        typeof position.o !== 'number' ||
        !Number.isInteger(position.o) ||
        position.o < 0
      )
        throw invalid('invalid cursor: not a position of a log')
      start = position.s
      skip = position.o
    } else if (this.args.ref !== undefined) {
      start = await this.commitOf(this.args.ref)
    } else start = 'HEAD'
    let commits: GitCommit[]
    try {
      commits = await this.backend.log(start, skip, this.limit + 1)
    } catch (error) {
      const head = await this.backend.head()
      if (head.oid === null)
        throw new IsoagentError(
          'not_found',
          `your current branch '${head.branch ?? 'HEAD'}' does not have any commits yet`,
          { data: { ref: 'HEAD' } },
        )
      throw error
    }
    // Without a ref the log starts at HEAD's commit: the first one listed.
    if (start === 'HEAD') start = commits[0]?.oid ?? start
    if (this.args.cursor !== undefined) {
      const expected = decodeCursor('git.log', this.args.cursor).n
      if (commits[0]?.oid !== expected)
        throw invalid('invalid cursor: the history it pages no longer has that commit there')
    }
    const shown = commits.slice(0, this.limit)
    const following = commits[this.limit]
    const next =
      following === undefined
        ? null
        : encodeCursor('git.log', { s: start, n: following.oid, o: skip + shown.length })
    const abbrev = await this.abbrev(shown.flatMap((c) => (c.parents.length > 1 ? c.parents : [])))
    const text = shown.map((c) => formatCommit(c, abbrev)).join('\n\n')
    const lines = text === '' ? [] : [text]
    if (next !== null) lines.push('', `... (more commits; continue with cursor="${next}")`)
    return this.result(lines.join('\n'), {
      start,
      returned: shown.length,
      commits: shown.map((c) => ({
        oid: c.oid,
        parents: c.parents,
        author: c.author,
        committer: c.committer,
        subject: subjectOf(c.message),
        message: c.message,
      })),
      truncated: next !== null,
      next_cursor: next,
    })
  }

  async diff(): Promise<ToolResult> {
    const prefix = this.prefix()
    const ref = this.args.ref === undefined ? undefined : await this.commitOf(this.args.ref)
    const files = await this.backend.diff(ref, prefix)
    const abbrev = await this.abbrev(diffOids(files))
    const parts = files.map((file) => formatDiffFile(file, abbrev))
    const full = new TextEncoder().encode(parts.map((p) => p.text).join(''))
    const offset = this.args.byte_offset ?? 0
    if (offset > full.length)
      throw invalid(`byte_offset ${offset} is past the end of the diff (${full.length} bytes)`, {
        total_bytes: full.length,
      })
    const maxBytes = this.args.max_bytes ?? GIT_DIFF_BYTES.default
    let end = Math.min(full.length, offset + maxBytes)
    // Never split a UTF-8 sequence: back off to the start of a character.
    while (end < full.length && end > offset && (full[end]! & 0xc0) === 0x80) end--
    const window = new TextDecoder().decode(full.subarray(offset, end))
    const next = end < full.length ? end : null
    const summaries: DiffFileSummary[] = parts.map((p) => p.summary)
    let output = window
    if (full.length === 0) output = '(no differences)'
    else if (next !== null)
      output += `${window.endsWith('\n') ? '' : '\n'}... (diff continues; next byte_offset=${next})`
    return this.result(output, {
      ref: this.args.ref ?? null,
      path: this.args.path === undefined ? null : WorkspacePath.display(prefix as WorkspacePath),
      files: summaries,
      total_bytes: full.length,
      byte_offset: offset,
      returned_bytes: end - offset,
      truncated: next !== null,
      next_byte_offset: next,
    })
  }

  async branch(): Promise<ToolResult> {
    const head = await this.backend.head()
    if (this.args.name !== undefined) {
      const name = this.args.name
      await this.checkNewBranch(name)
      const at = await this.commitOf(this.args.ref ?? 'HEAD').catch((error: unknown) => {
        if (this.args.ref === undefined && IsoagentError.is(error, 'not_found'))
          throw invalid(`not a valid object name: '${head.branch ?? 'HEAD'}' has no commits yet`)
        throw error
      })
      await this.backend.createBranch(name, at)
      return this.result(`Created branch '${name}' at ${await this.short(at)}`, {
        created: name,
        oid: at,
      })
    }
    const branches = await this.backend.branches()
    const rows = branches.map((b) => ({
      line: formatBranch(b, head),
      entry: { name: b.name, oid: b.oid, current: head.branch === b.name },
    }))
    if (head.branch === null && head.oid !== null) {
      const line = formatDetached(await this.short(head.oid))
      rows.unshift({ line, entry: { name: line.slice(2), oid: head.oid, current: true } })
    }
    const { items, next } = page('git.branch', rows, this.limit, this.args.cursor)
    const lines = [...items.map((r) => r.line), ...more(next)]
    return this.result(lines.join('\n') || '(no branches)', {
      current: head.branch,
      detached: head.branch === null,
      head: head.oid,
      branches: items.map((r) => r.entry),
      total: rows.length,
      truncated: next !== null,
      next_cursor: next,
    })
  }

  async checkNewBranch(name: string): Promise<void> {
    if (!isValidBranchName(name)) throw invalid(`'${name}' is not a valid branch name`, { name })
    const existing = await this.backend.branches()
    if (existing.some((b) => b.name === name))
      throw invalid(`a branch named '${name}' already exists`, { name })
  }

  async checkout(): Promise<ToolResult> {
    const { ref, name, new_branch: newBranch } = this.args
    if (newBranch === true && name === undefined)
      throw invalid('checkout with new_branch needs `name` (the branch to create)')
    if (newBranch !== true && name !== undefined)
      throw invalid('checkout with `name` creates a branch: pass new_branch: true (or use `ref`)')
    if (newBranch !== true && ref === undefined)
      throw invalid('checkout needs `ref` (a branch or commit) or `name` with new_branch: true')
    const { head, entries: status } = await this.backend.status()
    if (newBranch === true) await this.checkNewBranch(name!)
    let target: string
    if (newBranch === true && ref === undefined) {
      if (head.oid === null) throw invalid(`'${head.branch ?? 'HEAD'}' has no commits yet`)
      target = head.oid
    } else target = await this.commitOf(ref!)
    const branches = await this.backend.branches()
    const toBranch =
      newBranch === true ? name! : branches.some((b) => b.name === ref) ? ref! : undefined
    const unmerged = status.filter((e) => e.index === 'U' || e.worktree === 'U' || isBothAdded(e))
    if (unmerged.length > 0)
      throw invalid(
        `checkout refused: you need to resolve your current index first (unmerged: ${unmerged.map((e) => e.path).join(', ')})`,
      )
    if (toBranch !== undefined && toBranch === head.branch && newBranch !== true)
      return this.result(`Already on '${toBranch}'`, { branch: toBranch, head: head.oid })
    if (target !== head.oid) {
      const changes = await this.backend.treeChanges(head.oid, target)
      const dirty = new Map(status.map((e) => [e.path, e]))
      const conflicts = changes
        .filter((c) => {
          const entry = dirty.get(c.path)
          if (entry === undefined) return false
          return entry.index === '?' ? c.inTarget : true
        })
        .map((c) => c.path)
      if (conflicts.length > 0) {
        return toolFailure(
          'git',
          `checkout refused: your local changes to the following files would be overwritten by checkout:\n${conflicts.map((p) => `\t${p}`).join('\n')}\nCommit your changes or stash them before you switch branches. Nothing was changed.`,
          { type: 'version_conflict', path: conflicts[0]!, expected: 'clean', actual: 'modified' },
          { command: 'checkout', backend: this.backend.kind, conflicts },
        )
      }
    }
    if (newBranch === true) await this.backend.createBranch(name!, target)
    await this.backend.checkout(
      toBranch === undefined ? { detach: target } : { branch: toBranch },
      signature(this.author),
    )
    const output =
      newBranch === true
        ? `Switched to a new branch '${name}'`
        : toBranch !== undefined
          ? `Switched to branch '${toBranch}'`
          : `HEAD is now at ${await this.short(target)} ${subjectOf((await this.backend.log(target, 0, 1))[0]?.message ?? '')}`
    return this.result(output, {
      branch: toBranch ?? null,
      detached: toBranch === undefined,
      head: target,
      created: newBranch === true ? name : null,
    })
  }

  async stash(): Promise<ToolResult> {
    const sub = this.args.subcommand ?? 'push'
    if (sub === 'list') {
      const messages = await this.backend.stashList()
      const entries = messages.map((message, i) => ({ ref: `stash@{${i}}`, message }))
      const { items, next } = page('git.stash', entries, this.limit, this.args.cursor)
      const lines = items.map((e) => `${e.ref}: ${e.message}`)
      return this.result([...lines, ...more(next)].join('\n') || '(no stash entries)', {
        subcommand: 'list',
        entries: items,
        total: entries.length,
        truncated: next !== null,
        next_cursor: next,
      })
    }
    if (sub === 'pop') {
      if ((await this.backend.stashList()).length === 0)
        throw new IsoagentError('not_found', 'No stash entries found.', {
          data: { ref: 'stash@{0}' },
        })
      const dropped = await this.backend.stashPop()
      return this.result(`Dropped refs/stash@{0} (${dropped})`, {
        subcommand: 'pop',
        dropped,
      })
    }
    const { head, entries: status } = await this.backend.status()
    if (head.oid === null) throw invalid('You do not have the initial commit yet')
    if (status.some((e) => e.index === 'U' || e.worktree === 'U' || isBothAdded(e)))
      throw invalid('stash refused: resolve the unmerged paths first')
    if (!status.some((e) => e.index !== '?'))
      return this.result('No local changes to save', { subcommand: 'push', stashed: false })
    const commit = (await this.backend.log(head.oid, 0, 1))[0]
    const branch = head.branch ?? '(no branch)'
    const what = `${await this.short(head.oid)} ${subjectOf(commit?.message ?? '')}`
    const message =
      this.args.message === undefined
        ? `WIP on ${branch}: ${what}`
        : `On ${branch}: ${this.args.message}`
    const oid = await this.backend.stashPush(
      message,
      `index on ${branch}: ${what}`,
      signature(this.author),
    )
    return this.result(`Saved working directory and index state ${message}`, {
      subcommand: 'push',
      stashed: true,
      oid,
      message,
    })
  }

  async remote(): Promise<ToolResult> {
    const remotes = await this.backend.remotes()
    const { items, next } = page('git.remote', remotes, this.limit, this.args.cursor)
    return this.result(
      [...items.flatMap(formatRemote), ...more(next)].join('\n') || '(no remotes)',
      {
        remotes: items,
        total: remotes.length,
        truncated: next !== null,
        next_cursor: next,
      },
    )
  }

  async worktree(): Promise<ToolResult> {
    const trees = await this.backend.worktrees()
    const { items, next } = page('git.worktree', trees, this.limit, this.args.cursor)
    const abbrev = await this.abbrev(items.map((t) => t.head ?? ZERO_OID))
    return this.result([...formatWorktrees(items, abbrev), ...more(next)].join('\n'), {
      worktrees: items,
      total: trees.length,
      truncated: next !== null,
      next_cursor: next,
    })
  }

  async add(): Promise<ToolResult> {
    const prefix = this.prefix()
    if (
      prefix !== '' &&
      (await this.context.workspace.stat(prefix as WorkspacePath)) === undefined
    ) {
      const tracked = (await this.backend.status()).entries
      if (!tracked.some((e) => e.path === prefix || e.path.startsWith(`${prefix}/`)))
        throw new IsoagentError(
          'not_found',
          `pathspec '${this.args.path}' did not match any files`,
          {
            data: { path: this.args.path },
          },
        )
    }
    const changed = await this.backend.add(prefix)
    const lines = changed.map((c) => `${c.action} '${c.path}'`)
    return this.result(lines.join('\n') || '(nothing to add)', { paths: changed })
  }

  async commit(): Promise<ToolResult> {
    const raw = this.args.message
    if (raw === undefined || raw.trim() === '') throw invalid('commit needs a non-empty `message`')
    const { head, entries: status } = await this.backend.status()
    if (status.some((e) => e.index === 'U' || e.worktree === 'U' || isBothAdded(e)))
      throw invalid('commit refused: resolve the unmerged paths (and add them) first')
    if (!status.some((e) => e.index !== ' ' && e.index !== '?'))
      throw invalid('nothing to commit: no changes are staged (use command "add" first)')
    const message = `${raw.replace(/\s+$/, '')}\n`
    const oid = await this.backend.commit(message, signature(this.author))
    const branch = head.branch ?? 'detached HEAD'
    return this.result(
      `[${branch}${head.oid === null ? ' (root-commit)' : ''} ${await this.short(oid)}] ${subjectOf(message)}`,
      { oid, branch: head.branch, root: head.oid === null, parent: head.oid },
    )
  }
}

function isBothAdded(e: { index: string; worktree: string }): boolean {
  return (e.index === 'A' && e.worktree === 'A') || (e.index === 'D' && e.worktree === 'D')
}

/** Porcelain order: tracked (and unmerged) paths first, then untracked, each by path. */
function sortStatus<T extends { path: string; index: string }>(entries: T[]): T[] {
  const rank = (e: T) => (e.index === '?' ? 1 : 0)
  return [...entries].sort((a, b) => rank(a) - rank(b) || compareBytes(a.path, b.path))
}

async function initRepository(
  context: ToolContext,
  backend: GitBackend,
  args: GitArgs,
): Promise<ToolResult> {
  const root = context.workspace.capabilities.localRoot ?? ''
  const where = `${root}/.git/`
  const existing = await context.workspace.stat(WorkspacePath.parse('.git'))
  if (existing !== undefined)
    return toolSuccess('git', `Reinitialized existing Git repository in ${where}`, {
      command: args.command,
      backend: backend.kind,
      created: false,
    })
  await backend.init(GIT_DEFAULT_BRANCH)
  return toolSuccess('git', `Initialized empty Git repository in ${where}`, {
    command: args.command,
    backend: backend.kind,
    created: true,
    branch: GIT_DEFAULT_BRANCH,
  })
}

/** The `git` tool, committing as `author`. */
export function createGitTool(author: GitAuthor = DEFAULT_GIT_AUTHOR): ToolSpec<GitArgs> {
  return {
    name: 'git',
    pathArguments: ['path'],
    description:
      'Git in the workspace repository (the workspace root). Commands: status (porcelain), log ' +
      '(limit, cursor), diff (working tree vs index, or vs `ref`; `path`; byte paging with ' +
      'byte_offset/max_bytes), branch (list; with `name` create), checkout (`ref`, or `name` with ' +
      'new_branch: true; refused when local changes would be overwritten), stash (subcommand ' +
      'push|pop|list), remote, worktree (list), init, add (`path`, default all), commit (`message`).',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['command'],
      properties: {
        command: { type: 'string', enum: [...GIT_COMMANDS], description: 'The git command.' },
        ref: {
          type: 'string',
          minLength: 1,
          maxLength: 256,
          description:
            'A branch, tag or commit: what checkout switches to, what diff compares with, where log starts.',
        },
        path: {
          type: 'string',
          minLength: 1,
          description: 'File or directory (relative to the workspace root) for diff and add.',
        },
        name: {
          type: 'string',
          minLength: 1,
          maxLength: 255,
          description: 'Branch to create (branch, or checkout with new_branch).',
        },
        new_branch: { type: 'boolean', description: 'checkout: create branch `name` first.' },
        subcommand: {
          type: 'string',
          enum: ['push', 'pop', 'list'],
          description: 'stash: push (default), pop or list.',
        },
        message: {
          type: 'string',
          minLength: 1,
          maxLength: 65536,
          description: 'commit message (commit) or stash message (stash push).',
        },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: GIT_LIMIT.max,
          description: `Entries per page (log default ${GIT_LIMIT.log}, others ${GIT_LIMIT.default}, max ${GIT_LIMIT.max}).`,
        },
        cursor: {
          type: 'string',
          minLength: 1,
          description: 'metadata.next_cursor of the previous page.',
        },
        byte_offset: {
          type: 'integer',
          minimum: 0,
          description:
            'diff: first byte to return (metadata.next_byte_offset of the previous window).',
        },
        max_bytes: {
          type: 'integer',
          minimum: GIT_DIFF_BYTES.min,
          maximum: GIT_DIFF_BYTES.max,
          description: `diff: bytes per window (default ${GIT_DIFF_BYTES.default}).`,
        },
      },
    },
    available: (c) => c.git,
    scheduling: MUTATING,
    primaryArgument: 'command',
    async run(args, context) {
      // This call's own view of the backend: the call's signal stops its git work.
      const backend = gitBackendOf(context.workspace).withSignal(context.signal)
      if (args.command === 'init') return initRepository(context, backend, args)
      const dotGit = await context.workspace.stat(WorkspacePath.parse('.git'))
      if (dotGit === undefined)
        throw new IsoagentError(
          'not_found',
          'not a git repository: the workspace root has no .git (use command "init" to create one)',
          { data: { path: '.git' } },
        )
      const run = new GitRun(args, context, backend, author)
      try {
        return await dispatch(run)
      } catch (error) {
        throw typedGitError(error)
      }
    },
  }
}

/** isomorphic-git's own errors as IsoagentErrors (others pass through unchanged). */
function typedGitError(error: unknown): unknown {
  if (IsoagentError.is(error)) return error
  const code = (error as { code?: unknown } | null)?.code
  const message = error instanceof Error ? error.message : String(error)
  if (code === 'NotFoundError') return new IsoagentError('not_found', message, { cause: error })
  if (code === 'InvalidRefNameError' || code === 'AlreadyExistsError')
    return new IsoagentError('invalid_argument', message, { cause: error })
  if (code === 'CheckoutConflictError')
    return new IsoagentError('version_conflict', message, { cause: error })
  return error
}

function dispatch(run: GitRun): Promise<ToolResult> {
  switch (run.args.command) {
    case 'status':
      return run.status()
    case 'log':
      return run.log()
    case 'diff':
      return run.diff()
    case 'branch':
      return run.branch()
    case 'checkout':
      return run.checkout()
    case 'stash':
      return run.stash()
    case 'remote':
      return run.remote()
    case 'worktree':
      return run.worktree()
    case 'add':
      return run.add()
    case 'commit':
      return run.commit()
    default:
      throw invalid(`unknown git command: ${String(run.args.command)}`)
  }
}

/** The `git` tool with the default author (sessions with `gitAuthor` get their own). */
export const gitTool = createGitTool()
