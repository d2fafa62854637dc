import * as git from 'isomorphic-git'
// The npm `buffer` package (explicit file, so no bundler mistakes it for Node's built-in): the
// Buffer that isomorphic-git needs as a global where the runtime has none (browsers, workerd).
// eslint-disable-next-line no-restricted-imports
import { Buffer as BufferPolyfill } from 'buffer/index.js'
import { IsoagentError } from '../../errors.ts'
import type {
  GitAddedPath,
  GitBackend,
  GitBranch,
  GitCheckoutTarget,
  GitCommit,
  GitDiffFile,
  GitHead,
  GitRemote,
  GitSignature,
  GitStatusEntry,
  GitTreeChange,
  GitUpstream,
  GitWorktree,
} from '../../workspace/git-backend.ts'
import {
  autoAbbrevLength,
  configuredAbbrev,
  neighboursIn,
  packIndexOids,
  uniqueAbbrevLength,
  type SortedOids,
} from './abbrev.ts'
import type { IsoGitFs } from './fs-bridge.ts'
import { gitStoppedError, stoppableGitBackend } from './stopping.ts'
import { compareBytes, inPrefix, offsetOfTz, tzOfOffset } from './git-text.ts'

/** Options of {@link isomorphicGitBackend}. */
export interface IsomorphicBackendOptions {
  /** The file system holding the working tree (and `.git`) at `dir`. */
  fs: IsoGitFs
  /** Working-tree directory on `fs` (default `/`). */
  dir?: string
  /** Path shown by `worktree` for the main working tree (default `dir`). */
  displayRoot?: string
}

/**
 * Installs a `Buffer` global from the `buffer` package when the runtime has none (browsers,
 * workerd without nodejs_compat), or only a stand-in lacking `from`, `alloc` or `isBuffer`:
 * isomorphic-git uses the global. Node's own Buffer is kept. This runs when the first
 * isomorphic-git backend is created, never at import time.
 */
function ensureBufferGlobal(): void {
  const g = globalThis as Record<string, unknown>
  const current = g['Buffer'] as
    { from?: unknown; alloc?: unknown; isBuffer?: unknown; concat?: unknown } | undefined
  const complete =
    current !== undefined &&
    typeof current.from === 'function' &&
    typeof current.alloc === 'function' &&
    typeof current.isBuffer === 'function' &&
    typeof current.concat === 'function'
  if (!complete) g['Buffer'] = BufferPolyfill
}

type Entry = { oid: string; mode: string }
type FileMap = Map<string, Entry>

const ZERO_OID = '0000000000000000000000000000000000000000'
const decoder = new TextDecoder()
const encoder = new TextEncoder()

const modeText = (mode: number) => mode.toString(8).padStart(6, '0')

function signatureOf(p: {
  name: string
  email: string
  timestamp: number
  timezoneOffset: number
}): GitSignature {
  return { name: p.name, email: p.email, timestamp: p.timestamp, tz: tzOfOffset(p.timezoneOffset) }
}

function isNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'NotFoundError' || code === 'ENOENT'
}

/** Paths with unmerged (stage 1-3) entries in a git index file, with their stages. */
export function unmergedOfIndex(index: Uint8Array): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>()
  if (index.length < 12 || decoder.decode(index.subarray(0, 4)) !== 'DIRC') return out
  const view = new DataView(index.buffer, index.byteOffset, index.byteLength)
  const version = view.getUint32(4)
  const count = view.getUint32(8)
  if (version !== 2 && version !== 3) return out
  let at = 12
  for (let i = 0; i < count && at + 62 <= index.length; i++) {
    const flags = view.getUint16(at + 60)
    const extended = version === 3 && (flags & 0x4000) !== 0
    const nameStart = at + 62 + (extended ? 2 : 0)
    let nameEnd = nameStart
    while (nameEnd < index.length && index[nameEnd] !== 0) nameEnd++
    const stage = (flags >> 12) & 3
    if (stage > 0) {
      const path = decoder.decode(index.subarray(nameStart, nameEnd))
      const stages = out.get(path) ?? new Set<number>()
      stages.add(stage)
      out.set(path, stages)
    }
    const entryLength = nameEnd - at + 1
    at += Math.ceil(entryLength / 8) * 8
  }
  return out
}

/** The porcelain letters of an unmerged path from its stages (as `git status` prints them). */
export function unmergedCode(stages: Set<number>): string {
  const key = [1, 2, 3].map((s) => (stages.has(s) ? '1' : '0')).join('')
  const codes: Record<string, string> = {
    '111': 'UU',
    '011': 'AA',
    '110': 'UD',
    '101': 'DU',
    '010': 'AU',
    '001': 'UA',
    '100': 'DD',
  }
  return codes[key] ?? 'UU'
}

/**
 * `fs` for one call that `signal` stops. Until the call's first write, an abort makes every read
 * (but `stat`, which isomorphic-git's `exists` would log about) and every write throw, so
 * isomorphic-git stops at its next file operation and no change begins. The first write marks
 * the call as changing; from then on nothing is refused and the operation runs to its end, so a
 * checkout, commit or stash is never left half-written in process.
 */
function stoppableFs(fs: IsoGitFs, signal: AbortSignal, call: { changing: boolean }): IsoGitFs {
  const p = fs.promises
  const check = () => {
    if (signal.aborted && !call.changing) throw gitStoppedError(signal)
  }
  const writing = () => {
    check()
    call.changing = true
  }
  return {
    promises: {
      async readFile(path, options) {
        check()
        return p.readFile(path, options)
      },
      async writeFile(path, data, options) {
        writing()
        return p.writeFile(path, data, options)
      },
      async unlink(path) {
        writing()
        return p.unlink(path)
      },
      async readdir(path) {
        check()
        return p.readdir(path)
      },
      async mkdir(path, options) {
        writing()
        return p.mkdir(path, options)
      },
      async rmdir(path) {
        writing()
        return p.rmdir(path)
      },
      async stat(path) {
        return p.stat(path)
      },
      async lstat(path) {
        check()
        return p.lstat(path)
      },
      async readlink(path) {
        check()
        return p.readlink(path)
      },
      async symlink(target, path) {
        writing()
        return p.symlink(target, path)
      },
    },
  }
}

/**
 * The git backend on isomorphic-git: serves any file system it is given (the workspace bridge
 * for memory, browser and other non-local workspaces; `node:fs` on local disk).
 *
 * Stopping ({@link GitBackend.withSignal}): isomorphic-git runs in process, so a stopped call
 * ends at its next file operation (reads are refused once the signal has aborted) and at the
 * next backend step; its partial answer is discarded and it rejects with the stop reason. A
 * call that has already written (a blob, the index, a ref, a working-tree file) is not
 * interrupted: it runs to the end of its operation and resolves, since the change happened.
 */
export function isomorphicGitBackend(options: IsomorphicBackendOptions): GitBackend {
  ensureBufferGlobal()
  const dir = options.dir ?? '/'
  const gitdir = dir.endsWith('/') ? `${dir}.git` : `${dir}/.git`
  const abs = (path: string) => (dir.endsWith('/') ? `${dir}${path}` : `${dir}/${path}`)
  let cache: object = {}
  /** Forget cached packfiles and indexes after this backend wrote objects or refs. */
  const invalidate = () => {
    cache = {}
  }
  const withSignal = (signal: AbortSignal): GitBackend => {
    const call = { changing: false }
    return stoppableGitBackend(
      { ...operations(stoppableFs(options.fs, signal, call)), withSignal },
      signal,
      () => signal.aborted && !call.changing,
      // Reads were refused midway: nothing cached during this call can be trusted.
      invalidate,
    )
  }
  return { ...operations(options.fs), withSignal }

  /** The operations over `fs` (the plain file system, or one that a signal stops). */
  function operations(fs: IsoGitFs): Omit<GitBackend, 'withSignal'> {
    const base = () => ({ fs, dir, cache })

    async function readText(path: string): Promise<string | undefined> {
      try {
        return String(await fs.promises.readFile(path, { encoding: 'utf8' }))
      } catch (error) {
        if (isNotFound(error)) return undefined
        throw error
      }
    }

    async function unmerged(): Promise<Map<string, Set<number>>> {
      try {
        const bytes = await fs.promises.readFile(`${gitdir}/index`)
        return unmergedOfIndex(bytes instanceof Uint8Array ? bytes : encoder.encode(bytes))
      } catch (error) {
        if (isNotFound(error)) return new Map()
        throw error
      }
    }

    async function headOid(): Promise<string | null> {
      try {
        return await git.resolveRef({ ...base(), ref: 'HEAD' })
      } catch (error) {
        if (isNotFound(error)) return null
        throw error
      }
    }

    /** Every file of a walker (a tree, the index) under `prefix`, by path. */
    async function filesOf(walker: ReturnType<typeof git.TREE>, prefix = ''): Promise<FileMap> {
      const out: FileMap = new Map()
      await git.walk({
        ...base(),
        trees: [walker],
        map: async (path, [entry]) => {
          if (path === '.') return undefined
          if (!inPrefix(path, prefix) && !prefix.startsWith(`${path}/`)) return null
          if (entry === null || entry === undefined) return undefined
          const type = await entry.type()
          if (type === 'tree') return undefined
          if (inPrefix(path, prefix))
            out.set(path, { oid: await entry.oid(), mode: modeText(await entry.mode()) })
          return undefined
        },
      })
      return out
    }

    async function treeFiles(oid: string | null, prefix = ''): Promise<FileMap> {
      if (oid === null) return new Map()
      return filesOf(git.TREE({ ref: oid }), prefix)
    }

    async function readBlob(oid: string): Promise<Uint8Array> {
      return new Uint8Array((await git.readBlob({ ...base(), oid })).blob)
    }

    async function workFile(path: string): Promise<Uint8Array | undefined> {
      try {
        const s = await fs.promises.lstat(abs(path))
        if (s.isDirectory()) return undefined
        const data = await fs.promises.readFile(abs(path))
        return data instanceof Uint8Array ? new Uint8Array(data) : encoder.encode(data)
      } catch (error) {
        if (isNotFound(error) || (error as { code?: unknown }).code === 'ENOTDIR') return undefined
        throw error
      }
    }

    async function writeWorkFile(path: string, data: Uint8Array): Promise<void> {
      const parts = path.split('/')
      for (let i = 1; i < parts.length; i++) {
        try {
          await fs.promises.mkdir(abs(parts.slice(0, i).join('/')))
        } catch (error) {
          if ((error as { code?: unknown }).code !== 'EEXIST') throw error
        }
      }
      await fs.promises.writeFile(abs(path), data)
    }

    async function removeWorkFile(path: string): Promise<void> {
      try {
        await fs.promises.unlink(abs(path))
      } catch (error) {
        if (!isNotFound(error)) throw error
        return
      }
      // Remove directories the file leaves empty, as git does.
      const parts = path.split('/')
      for (let i = parts.length - 1; i > 0; i--) {
        const d = abs(parts.slice(0, i).join('/'))
        try {
          if ((await fs.promises.readdir(d)).length > 0) return
          await fs.promises.rmdir(d)
        } catch {
          return
        }
      }
    }

    /** Write a tree for a flat map of files, returning its oid. */
    async function writeTreeOf(files: FileMap): Promise<string> {
      type Node = { files: Map<string, Entry>; dirs: Map<string, Node> }
      const root: Node = { files: new Map(), dirs: new Map() }
      for (const [path, entry] of files) {
        const parts = path.split('/')
        let node = root
        for (const part of parts.slice(0, -1)) {
          let next = node.dirs.get(part)
          if (next === undefined) {
            next = { files: new Map(), dirs: new Map() }
            node.dirs.set(part, next)
          }
          node = next
        }
        node.files.set(parts[parts.length - 1]!, entry)
      }
      const write = async (node: Node): Promise<string> => {
        const tree: { mode: string; path: string; oid: string; type: 'blob' | 'tree' }[] = []
        for (const [name, child] of node.dirs)
          tree.push({ mode: '040000', path: name, oid: await write(child), type: 'tree' })
        for (const [name, entry] of node.files)
          tree.push({ mode: entry.mode, path: name, oid: entry.oid, type: 'blob' })
        return git.writeTree({ ...base(), tree })
      }
      return write(root)
    }

    async function readBytes(path: string): Promise<Uint8Array | undefined> {
      try {
        const data = await fs.promises.readFile(path)
        return data instanceof Uint8Array ? data : encoder.encode(data)
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code
        if (isNotFound(error) || code === 'EISDIR' || code === 'ENOTDIR') return undefined
        throw error
      }
    }

    async function listDir(path: string): Promise<string[]> {
      try {
        return await fs.promises.readdir(path)
      } catch (error) {
        if (isNotFound(error) || (error as { code?: unknown }).code === 'ENOTDIR') return []
        throw error
      }
    }

    /** The commit `oid` names, peeling annotated tags; undefined for other objects. */
    async function peelToCommit(oid: string): Promise<string | undefined> {
      try {
        for (let i = 0; i < 8; i++) {
          const object = await git.readObject({ ...base(), oid, format: 'parsed' })
          if (object.type === 'commit') return oid
          if (object.type !== 'tag') return undefined
          oid = (object.object as { object: string }).object
        }
      } catch (error) {
        if (isNotFound(error)) return undefined
        throw error
      }
      return undefined
    }

    /** `name -> oid` of `packed-refs` (peeled lines skipped). */
    async function packedRefs(): Promise<Map<string, string>> {
      const out = new Map<string, string>()
      for (const line of ((await readText(`${gitdir}/packed-refs`)) ?? '').split('\n')) {
        const m = /^([0-9a-f]{40}) (\S+)$/.exec(line)
        if (m !== null) out.set(m[2]!, m[1]!)
      }
      return out
    }

    /**
     * The object id ref `name` holds, read as exactly that name (loose or packed, following
     * symbolic refs), without the name expansion `resolveRef` applies.
     */
    async function readExactRef(
      name: string,
      packed: Map<string, string>,
      depth = 0,
    ): Promise<string | undefined> {
      if (depth > 5 || !isSafeRefName(name)) return undefined
      const loose = await readText(`${gitdir}/${name}`).catch(() => undefined)
      if (loose !== undefined) {
        const text = loose.trim()
        if (/^[0-9a-f]{40}$/.test(text)) return text
        if (text.startsWith('ref: ')) return readExactRef(text.slice(5).trim(), packed, depth + 1)
        return undefined
      }
      return packed.get(name)
    }

    /** The upstream of `branch` at `oid` as `git status -b` reports it (see git's remote.c). */
    async function upstreamOf(branch: string, oid: string | null): Promise<GitUpstream | null> {
      const config = (path: string) => git.getConfigAll({ fs, dir, path })
      const remote = (await config(`branch.${branch}.remote`)).at(-1)
      const merge = (await config(`branch.${branch}.merge`))[0]
      if (typeof remote !== 'string' || typeof merge !== 'string' || remote === '') return null
      const packed = await packedRefs()
      let target: string | undefined
      if (remote === '.') {
        const found: string[] = []
        for (const rule of REF_RULES)
          if ((await readExactRef(rule(merge), packed)) !== undefined) found.push(rule(merge))
        target = found.length === 1 ? found[0] : merge
      } else {
        const specs = (await config(`remote.${remote}.fetch`)).filter(
          (v): v is string => typeof v === 'string',
        )
        target = trackingRef(specs, merge)
      }
      if (target === undefined) return null
      const exists = async (name: string) => (await readExactRef(name, packed)) !== undefined
      const name = await shortenRef(target, exists)
      const theirs = await readExactRef(target, packed).then((o) =>
        o === undefined ? undefined : peelToCommit(o),
      )
      if (theirs === undefined || oid === null)
        return { name, ahead: null, behind: null, gone: true }
      const [ahead, behind] = await aheadBehind(oid, theirs)
      return { name, ahead, behind, gone: false }
    }

    /** Commits reachable from `ours` only and from `theirs` only (`rev-list --left-right`). */
    async function aheadBehind(ours: string, theirs: string): Promise<[number, number]> {
      if (ours === theirs) return [0, 0]
      const LEFT = 1
      const RIGHT = 2
      const BOTH = LEFT | RIGHT
      const flags = new Map<string, number>()
      const dates = new Map<string, number>()
      const parents = new Map<string, string[]>()
      const queued = new Set<string>()
      const heap: string[] = []
      let fresh = 0
      const before = (a: string, b: string) => dates.get(a)! > dates.get(b)!
      const load = async (oid: string) => {
        if (dates.has(oid)) return
        try {
          const { commit } = await git.readCommit({ ...base(), oid })
          dates.set(oid, commit.committer.timestamp)
          parents.set(oid, commit.parent)
        } catch (error) {
          if (!isNotFound(error)) throw error
          // A commit missing from a shallow history ends the walk there.
          dates.set(oid, -Infinity)
          parents.set(oid, [])
        }
      }
      const mark = async (oid: string, flag: number) => {
        const old = flags.get(oid) ?? 0
        const now = old | flag
        if (now === old) return
        flags.set(oid, now)
        if (queued.has(oid)) {
          if (now === BOTH) fresh--
          return
        }
        await load(oid)
        queued.add(oid)
        if (now !== BOTH) fresh++
        heap.push(oid)
        for (let i = heap.length - 1; i > 0;) {
          const up = (i - 1) >> 1
          if (!before(heap[i]!, heap[up]!)) break
          ;[heap[i], heap[up]] = [heap[up]!, heap[i]!]
          i = up
        }
      }
      const pop = (): string => {
        const top = heap[0]!
        const last = heap.pop()!
        if (heap.length > 0) {
          heap[0] = last
          for (let i = 0; ;) {
            const l = 2 * i + 1
            const r = l + 1
            let best = i
            if (l < heap.length && before(heap[l]!, heap[best]!)) best = l
            if (r < heap.length && before(heap[r]!, heap[best]!)) best = r
            if (best === i) break
            ;[heap[i], heap[best]] = [heap[best]!, heap[i]!]
            i = best
          }
        }
        queued.delete(top)
        if (flags.get(top) !== BOTH) fresh--
        return top
      }
      await mark(ours, LEFT)
      await mark(theirs, RIGHT)
      // Walk newest first until every commit still queued is reachable from both sides.
      while (fresh > 0) {
        const oid = pop()
        const flag = flags.get(oid)!
        for (const parent of parents.get(oid)!) await mark(parent, flag)
      }
      let ahead = 0
      let behind = 0
      for (const flag of flags.values()) {
        if (flag === LEFT) ahead++
        else if (flag === RIGHT) behind++
      }
      return [ahead, behind]
    }

    /** The sorted object tables of the repository's packs (an index without its pack is skipped). */
    async function packIndexes(): Promise<SortedOids[]> {
      const names = await listDir(`${gitdir}/objects/pack`)
      const present = new Set(names)
      const out: SortedOids[] = []
      for (const name of names.filter((n) => n.endsWith('.idx')).sort(compareBytes)) {
        if (!present.has(`${name.slice(0, -4)}.pack`)) continue
        const bytes = await readBytes(`${gitdir}/objects/pack/${name}`)
        if (bytes === undefined) continue
        try {
          out.push(packIndexOids(bytes))
        } catch {
          // git skips a pack index it cannot read.
        }
      }
      return out
    }

    async function head(): Promise<GitHead> {
      const branch = await git.currentBranch({ ...base(), fullname: false, test: false })
      return { branch: branch ?? null, oid: await headOid() }
    }

    async function worktreeStatus(): Promise<GitStatusEntry[]> {
      const conflicts = await unmerged()
      const out: GitStatusEntry[] = []
      for (const [path, stages] of conflicts) {
        const code = unmergedCode(stages)
        out.push({ path, index: code[0]!, worktree: code[1]! })
      }
      // No index refresh: reading the status must not rewrite .git/index.
      const matrix = await git.statusMatrix({ ...base(), refresh: false })
      for (const [path, head, work, stage] of matrix) {
        if (conflicts.has(path)) continue
        const entry = (index: string, worktree: string) => out.push({ path, index, worktree })
        if (head === 0) {
          if (stage === 0) {
            if (work !== 0) entry('?', '?')
          } else if (work === 0) entry('A', 'D')
          else entry('A', stage === 3 ? 'M' : ' ')
          continue
        }
        if (stage === 0) {
          entry('D', ' ')
          if (work !== 0) entry('?', '?')
          continue
        }
        const x = stage === 1 ? ' ' : 'M'
        const y =
          work === 0 ? 'D' : (stage === 1 && work === 2) || (stage === 3 && work !== 2) ? 'M' : ' '
        if (stage === 3 && work === 2) {
          // Staged and working tree both differ from HEAD; they may still differ from each other.
          entry(x, 'M')
          continue
        }
        if (x !== ' ' || y !== ' ') entry(x, y)
      }
      return out
    }

    return {
      kind: 'isomorphic-git',

      head,

      async status() {
        const now = await head()
        const upstream = now.branch === null ? null : await upstreamOf(now.branch, now.oid)
        return { head: now, upstream, entries: await worktreeStatus() }
      },

      async resolveCommit(ref) {
        let oid: string | undefined
        try {
          oid = await git.resolveRef({ ...base(), ref })
        } catch (error) {
          if (!isNotFound(error) && (error as { code?: unknown }).code !== 'InvalidRefNameError')
            throw error
        }
        if (oid === undefined && /^[0-9a-f]{4,40}$/.test(ref)) {
          try {
            oid = await git.expandOid({ ...base(), oid: ref })
          } catch (error) {
            if (!isNotFound(error) && (error as { code?: unknown }).code !== 'AmbiguousError')
              throw error
          }
        }
        if (oid === undefined) return undefined
        return peelToCommit(oid)
      },

      async abbreviate(oids) {
        if (oids.length === 0) return []
        const setting = configuredAbbrev(await git.getConfig({ fs, dir, path: 'core.abbrev' }))
        if (setting >= 40) return [...oids]
        const packs = await packIndexes()
        const count = packs.reduce((sum, p) => sum + p.count, 0)
        const minimum = setting < 0 ? autoAbbrevLength(count) : setting
        const loose = new Map<string, string[]>()
        const out: string[] = []
        for (const oid of oids) {
          let length = uniqueAbbrevLength(
            oid,
            minimum,
            packs.flatMap((p) => neighboursIn(p, oid)),
          )
          const fan = oid.slice(0, 2)
          let names = loose.get(fan)
          if (names === undefined) {
            names = (await listDir(`${gitdir}/objects/${fan}`))
              .filter((n) => /^[0-9a-f]{38}$/.test(n))
              .map((n) => `${fan}${n}`)
            loose.set(fan, names)
          }
          length = uniqueAbbrevLength(oid, length, names)
          out.push(oid.slice(0, length))
        }
        return out
      },

      async log(start, skip, limit) {
        const commits = await git.log({ ...base(), ref: start, depth: skip + limit })
        return commits.slice(skip).map((c): GitCommit => ({
          oid: c.oid,
          parents: c.commit.parent,
          author: signatureOf(c.commit.author),
          committer: signatureOf(c.commit.committer),
          message: c.commit.message.replace(/\n+$/, ''),
        }))
      },

      async branches() {
        const names = await git.listBranches({ ...base() })
        const out: GitBranch[] = []
        for (const name of names) {
          if (name === 'HEAD') continue
          out.push({ name, oid: await git.resolveRef({ ...base(), ref: `refs/heads/${name}` }) })
        }
        return out.sort((a, b) => compareBytes(a.name, b.name))
      },

      async createBranch(name, oid) {
        await git.writeRef({ ...base(), ref: `refs/heads/${name}`, value: oid })
        invalidate()
      },

      async treeChanges(from, to) {
        const before = await treeFiles(from)
        const after = await treeFiles(to)
        const out: GitTreeChange[] = []
        for (const [path, entry] of after) {
          const old = before.get(path)
          if (old === undefined || old.oid !== entry.oid || old.mode !== entry.mode)
            out.push({ path, inTarget: true })
        }
        for (const path of before.keys()) if (!after.has(path)) out.push({ path, inTarget: false })
        return out.sort((a, b) => compareBytes(a.path, b.path))
      },

      async checkout(target: GitCheckoutTarget, who) {
        const ref = 'branch' in target ? target.branch : target.detach
        const before = await headOid()
        const from =
          (await git.currentBranch({ ...base(), fullname: false, test: false })) ?? before ?? 'HEAD'
        await git.checkout({ ...base(), ref })
        // The HEAD reflog entry git writes (git branch reads it for "HEAD detached at").
        const after = (await headOid()) ?? ZERO_OID
        const log = (await readText(`${gitdir}/logs/HEAD`)) ?? ''
        await writeWorkFile(
          '.git/logs/HEAD',
          encoder.encode(
            `${log}${before ?? ZERO_OID} ${after} ${who.name} <${who.email}> ${who.timestamp} ${who.tz}\tcheckout: moving from ${from} to ${ref}\n`,
          ),
        )
        invalidate()
      },

      async diff(ref, prefix) {
        const conflicts = await unmerged()
        const out: GitDiffFile[] = []
        for (const path of conflicts.keys())
          if (inPrefix(path, prefix)) out.push({ path, old: null, new: null, unmerged: true })
        const index = await filesOf(git.STAGE(), prefix)
        const base_ = ref === undefined ? index : await treeFiles(ref, prefix)
        const paths = new Set([...base_.keys(), ...(ref === undefined ? [] : index.keys())])
        for (const path of paths) {
          if (conflicts.has(path)) continue
          const old = base_.get(path)
          // Against a commit, a path that is not in the index counts as deleted, as in git.
          const data = ref !== undefined && !index.has(path) ? undefined : await workFile(path)
          const mode = index.get(path)?.mode ?? old?.mode ?? '100644'
          const oldSide = old === undefined ? null : { ...old, data: await readBlob(old.oid) }
          if (data === undefined) {
            if (oldSide !== null) out.push({ path, old: oldSide, new: null })
            continue
          }
          if (oldSide !== null && compareData(oldSide.data, data)) continue
          out.push({ path, old: oldSide, new: { mode, data } })
        }
        return out.sort((a, b) => compareBytes(a.path, b.path))
      },

      async stashList() {
        const text = await readText(`${gitdir}/logs/refs/stash`)
        if (text === undefined) return []
        return text
          .split('\n')
          .filter((line) => line.length > 0)
          .map((line) => line.slice(line.indexOf('\t') + 1))
          .reverse()
      },

      async stashPush(message, indexMessage, who) {
        const head = await headOid()
        if (head === null) throw new IsoagentError('invalid_argument', 'no commit to stash on')
        const headFiles = await treeFiles(head)
        const index = await filesOf(git.STAGE())
        const work: FileMap = new Map()
        for (const [path, entry] of index) {
          const data = await workFile(path)
          if (data === undefined) continue
          work.set(path, { oid: await git.writeBlob({ ...base(), blob: data }), mode: entry.mode })
        }
        const author = { name: who.name, email: who.email, timestamp: who.timestamp }
        const timezoneOffset = offsetOfTz(who.tz)
        const person = { ...author, timezoneOffset }
        const indexCommit = await git.writeCommit({
          ...base(),
          commit: {
            message: `${indexMessage}\n`,
            tree: await writeTreeOf(index),
            parent: [head],
            author: person,
            committer: person,
          },
        })
        const stash = await git.writeCommit({
          ...base(),
          commit: {
            message: `${message}\n`,
            tree: await writeTreeOf(work),
            parent: [head, indexCommit],
            author: person,
            committer: person,
          },
        })
        let previous = ZERO_OID
        try {
          previous = await git.resolveRef({ ...base(), ref: 'refs/stash' })
        } catch (error) {
          if (!isNotFound(error)) throw error
        }
        await git.writeRef({ ...base(), ref: 'refs/stash', value: stash, force: true })
        const log = (await readText(`${gitdir}/logs/refs/stash`)) ?? ''
        await writeWorkFile(
          '.git/logs/refs/stash',
          encoder.encode(
            `${log}${previous} ${stash} ${who.name} <${who.email}> ${who.timestamp} ${who.tz}\t${message}\n`,
          ),
        )
        // Reset the stashed paths (index and working tree) to HEAD.
        const touched = new Set<string>()
        for (const [path, entry] of index) {
          const h = headFiles.get(path)
          const w = work.get(path)
          if (h === undefined || h.oid !== entry.oid || w === undefined || w.oid !== h.oid)
            touched.add(path)
        }
        for (const path of headFiles.keys()) if (!index.has(path)) touched.add(path)
        for (const path of [...touched].sort(compareBytes)) {
          const h = headFiles.get(path)
          if (h === undefined) await removeWorkFile(path)
          else await writeWorkFile(path, await readBlob(h.oid))
          await git.resetIndex({ ...base(), filepath: path, ref: head })
        }
        invalidate()
        return stash
      },

      async stashPop() {
        const stash = await git.resolveRef({ ...base(), ref: 'refs/stash' })
        const { commit } = await git.readCommit({ ...base(), oid: stash })
        const [baseOid, indexOid] = commit.parent
        if (baseOid === undefined || indexOid === undefined) {
          throw new IsoagentError('unsupported', `stash@{0} (${stash}) is not a git stash commit`)
        }
        const baseFiles = await treeFiles(baseOid)
        const indexFiles = await treeFiles((await git.readCommit({ ...base(), oid: indexOid })).oid)
        const stashFiles = await treeFiles(stash)
        const current = await filesOf(git.STAGE())
        const changed = new Set<string>()
        for (const [path, entry] of stashFiles)
          if (baseFiles.get(path)?.oid !== entry.oid) changed.add(path)
        for (const path of baseFiles.keys()) if (!stashFiles.has(path)) changed.add(path)
        // Refuse (changing nothing) when a path the stash changes has local changes.
        const blocked: string[] = []
        for (const path of changed) {
          const b = baseFiles.get(path)
          const data = await workFile(path)
          const inIndex = current.get(path)
          if (b === undefined) {
            if (data !== undefined || inIndex !== undefined) blocked.push(path)
            continue
          }
          const workOid =
            data === undefined ? undefined : await git.hashBlob({ object: data }).then((h) => h.oid)
          if (inIndex?.oid !== b.oid || workOid !== b.oid) blocked.push(path)
        }
        if (blocked.length > 0) {
          blocked.sort(compareBytes)
          throw new IsoagentError(
            'version_conflict',
            `stash pop refused: local changes to ${blocked.join(', ')} would be overwritten; commit or stash them first`,
            { data: { path: blocked[0], expected: 'clean', actual: 'modified', paths: blocked } },
          )
        }
        for (const path of [...changed].sort(compareBytes)) {
          const entry = stashFiles.get(path)
          if (entry === undefined) {
            await removeWorkFile(path)
            if (!indexFiles.has(path)) await git.remove({ ...base(), filepath: path })
            continue
          }
          await writeWorkFile(path, await readBlob(entry.oid))
          if (!baseFiles.has(path) && indexFiles.has(path))
            await git.add({ ...base(), filepath: path })
        }
        // Drop stash@{0}.
        const log = ((await readText(`${gitdir}/logs/refs/stash`)) ?? '')
          .split('\n')
          .filter((line) => line.length > 0)
        log.pop()
        const last = log[log.length - 1]
        if (last === undefined) {
          await git.deleteRef({ ...base(), ref: 'refs/stash' })
          await fs.promises.unlink(`${gitdir}/logs/refs/stash`).catch(() => undefined)
        } else {
          await git.writeRef({
            ...base(),
            ref: 'refs/stash',
            value: last.split(' ')[1]!,
            force: true,
          })
          await fs.promises.writeFile(`${gitdir}/logs/refs/stash`, `${log.join('\n')}\n`)
        }
        invalidate()
        return stash
      },

      async remotes() {
        const remotes = await git.listRemotes({ ...base() })
        return remotes
          .map((r): GitRemote => ({ name: r.remote, url: r.url }))
          .sort((a, b) => compareBytes(a.name, b.name))
      },

      async worktrees() {
        const main = await head()
        const out: GitWorktree[] = [
          { path: options.displayRoot ?? dir, head: main.oid, branch: main.branch, main: true },
        ]
        let ids: string[] = []
        try {
          ids = (await fs.promises.readdir(`${gitdir}/worktrees`)).sort(compareBytes)
        } catch (error) {
          if (!isNotFound(error) && (error as { code?: unknown }).code !== 'ENOTDIR') throw error
        }
        for (const id of ids) {
          const pointer = (await readText(`${gitdir}/worktrees/${id}/gitdir`))?.trim()
          const headText = (await readText(`${gitdir}/worktrees/${id}/HEAD`))?.trim()
          if (pointer === undefined || headText === undefined) continue
          const path = pointer.replace(/\/\.git$/, '')
          if (headText.startsWith('ref: ')) {
            const ref = headText.slice(5)
            let oid: string | null = null
            try {
              oid = await git.resolveRef({ ...base(), ref })
            } catch (error) {
              if (!isNotFound(error)) throw error
            }
            out.push({ path, head: oid, branch: ref.replace(/^refs\/heads\//, ''), main: false })
          } else out.push({ path, head: headText, branch: null, main: false })
        }
        return out
      },

      async init(defaultBranch) {
        await git.init({ fs, dir, defaultBranch })
        invalidate()
      },

      async add(prefix) {
        const matrix = await git.statusMatrix({
          ...base(),
          ...(prefix === '' ? {} : { filepaths: [prefix] }),
        })
        const out: GitAddedPath[] = []
        const conflicts = await unmerged()
        for (const [path, , work, stage] of matrix) {
          if (!inPrefix(path, prefix)) continue
          if (work === 0) {
            if (stage !== 0) {
              await git.remove({ ...base(), filepath: path })
              out.push({ path, action: 'remove' })
            }
            continue
          }
          const same = (work === 1 && stage === 1) || (work === 2 && stage === 2)
          if (same && !conflicts.has(path)) continue
          await git.add({ ...base(), filepath: path })
          out.push({ path, action: 'add' })
        }
        invalidate()
        return out.sort((a, b) => compareBytes(a.path, b.path))
      },

      async commit(message, who) {
        const person = {
          name: who.name,
          email: who.email,
          timestamp: who.timestamp,
          timezoneOffset: offsetOfTz(who.tz),
        }
        const oid = await git.commit({ ...base(), message, author: person, committer: person })
        invalidate()
        return oid
      },
    }
  }
}

/** git's ref lookup rules (`ref_rev_parse_rules`), most literal first. */
const REF_RULES: ((name: string) => string)[] = [
  (n) => n,
  (n) => `refs/${n}`,
  (n) => `refs/tags/${n}`,
  (n) => `refs/heads/${n}`,
  (n) => `refs/remotes/${n}`,
  (n) => `refs/remotes/${n}/HEAD`,
]

/** A ref name that stays inside the git directory (no `..`, no absolute or odd components). */
function isSafeRefName(name: string): boolean {
  if (name.length === 0 || name.startsWith('/') || name.endsWith('/')) return false
  if (/[\0-\x20\x7f~^:?*[\\]/.test(name) || name.includes('@{')) return false
  return name.split('/').every((part) => part.length > 0 && !part.startsWith('.'))
}

/**
 * The remote-tracking ref the fetch `specs` map the remote ref `merge` to (git's
 * `remote_find_tracking`), or undefined. Negative refspecs that match exclude it.
 */
export function trackingRef(specs: string[], merge: string): string | undefined {
  const glob = (pattern: string, name: string): string | undefined => {
    const star = pattern.indexOf('*')
    if (star < 0) return pattern === name ? '' : undefined
    const head = pattern.slice(0, star)
    const tail = pattern.slice(star + 1)
    if (name.length < head.length + tail.length) return undefined
    if (!name.startsWith(head) || !name.endsWith(tail)) return undefined
    return name.slice(head.length, name.length - tail.length)
  }
  for (const spec of specs)
    if (spec.startsWith('^') && glob(spec.slice(1), merge) !== undefined) return undefined
  for (const raw of specs) {
    if (raw.startsWith('^')) continue
    const spec = raw.startsWith('+') ? raw.slice(1) : raw
    const colon = spec.indexOf(':')
    if (colon < 0) continue
    const src = spec.slice(0, colon)
    const dst = spec.slice(colon + 1)
    if (dst === '') continue
    const middle = glob(src, merge)
    if (middle === undefined) continue
    return src.includes('*') ? dst.replace('*', middle) : dst
  }
  return undefined
}

/**
 * git's `shorten_unambiguous_ref(ref, 0)`: the shortest name a rule maps back to `ref` that no
 * earlier (more literal) rule resolves to an existing ref.
 */
export async function shortenRef(
  ref: string,
  exists: (name: string) => Promise<boolean>,
): Promise<string> {
  const prefixes = ['', 'refs/', 'refs/tags/', 'refs/heads/', 'refs/remotes/']
  for (let i = prefixes.length - 1; i > 0; i--) {
    const prefix = prefixes[i]!
    if (!ref.startsWith(prefix) || ref.length === prefix.length) continue
    const short = ref.slice(prefix.length)
    let ambiguous = false
    for (let j = 0; j < i && !ambiguous; j++) ambiguous = await exists(REF_RULES[j]!(short))
    if (!ambiguous) return short
  }
  return ref
}

function compareData(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
