import * as git from 'isomorphic-git'
import type { GitHead, GitSignature } from '../../../workspace/git-backend.ts'
import type { SortedOids } from '../abbrev.ts'
import type { IsoGitFs } from '../fs-bridge.ts'
import { inPrefix, tzOfOffset } from '../git-text.ts'
import { unmergedOfIndex } from './index-file.ts'

/** A file of a tree or the index: blob id and six-digit octal mode. */
export type Entry = { oid: string; mode: string }
/** Files by path. */
export type FileMap = Map<string, Entry>

export const ZERO_OID = '0000000000000000000000000000000000000000'
export const encoder = new TextEncoder()

export const modeText = (mode: number) => mode.toString(8).padStart(6, '0')

export function signatureOf(p: {
  name: string
  email: string
  timestamp: number
  timezoneOffset: number
}): GitSignature {
  return { name: p.name, email: p.email, timestamp: p.timestamp, tz: tzOfOffset(p.timezoneOffset) }
}

export function isNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'NotFoundError' || code === 'ENOENT'
}

/** What stays the same across the calls of one backend: where, and what it caches. */
export interface RepoShared {
  /** Working-tree directory on the file system. */
  dir: string
  /** The `.git` directory. */
  gitdir: string
  /** Path shown by `worktree` for the main working tree. */
  displayRoot: string
  /** isomorphic-git's cache of packfiles and indexes (replaced by `invalidate`). */
  cache: object
  /** Forget cached packfiles and indexes after this backend wrote objects or refs. */
  invalidate(): void
  /**
   * Blob ids of working-tree files by path and stat, for files `status` had to hash (a stat
   * the index does not hold): kept across calls, so a repository whose index was written
   * elsewhere (imported into a browser) is hashed once, not at every `status`.
   */
  statOids: Map<string, string>
  /** Object tables of pack indexes by file name (a pack's name is its content's hash). */
  packOids: Map<string, SortedOids>
}

/**
 * One repository as the operations see it: the file system of this call (plain, or one a signal
 * stops), where the repository is, and the small reads and writes every operation shares.
 */
export interface RepoContext extends RepoShared {
  fs: IsoGitFs
  /** The arguments every isomorphic-git call takes. */
  base(): { fs: IsoGitFs; dir: string; cache: object }
  /** `path` (working-tree relative) on the file system. */
  abs(path: string): string
  readText(path: string): Promise<string | undefined>
  readBytes(path: string): Promise<Uint8Array | undefined>
  listDir(path: string): Promise<string[]>
  /** Unmerged paths of the index, with their stages. */
  unmerged(): Promise<Map<string, Set<number>>>
  headOid(): Promise<string | null>
  head(): Promise<GitHead>
  /** Every file of a walker (a tree, the index) under `prefix`, by path. */
  filesOf(walker: ReturnType<typeof git.TREE>, prefix?: string): Promise<FileMap>
  treeFiles(oid: string | null, prefix?: string): Promise<FileMap>
  readBlob(oid: string): Promise<Uint8Array>
  workFile(path: string): Promise<Uint8Array | undefined>
  writeWorkFile(path: string, data: Uint8Array): Promise<void>
  removeWorkFile(path: string): Promise<void>
  /** Write a tree for a flat map of files, returning its oid. */
  writeTreeOf(files: FileMap): Promise<string>
  /** The commit `oid` names, peeling annotated tags; undefined for other objects. */
  peelToCommit(oid: string): Promise<string | undefined>
}

/** The context of `shared` over `fs`. */
export function repoContext(fs: IsoGitFs, shared: RepoShared): RepoContext {
  const { dir, gitdir } = shared
  const abs = (path: string) => (dir.endsWith('/') ? `${dir}${path}` : `${dir}/${path}`)
  const base = () => ({ fs, dir, cache: shared.cache })
  const context: RepoContext = Object.assign(Object.create(shared) as RepoShared, {
    fs,
    base,
    abs,
    readText: (path: string) => readText(fs, path),
    readBytes: (path: string) => readBytes(fs, path),
    listDir: (path: string) => listDir(fs, path),
    async unmerged() {
      const bytes = await readBytes(fs, `${gitdir}/index`)
      return bytes === undefined ? new Map<string, Set<number>>() : unmergedOfIndex(bytes)
    },
    async headOid() {
      try {
        return await git.resolveRef({ ...base(), ref: 'HEAD' })
      } catch (error) {
        if (isNotFound(error)) return null
        throw error
      }
    },
    async head() {
      const branch = await git.currentBranch({ ...base(), fullname: false, test: false })
      return { branch: branch ?? null, oid: await context.headOid() }
    },
    filesOf: (walker: ReturnType<typeof git.TREE>, prefix = '') => filesOf(base(), walker, prefix),
    async treeFiles(oid: string | null, prefix = '') {
      if (oid === null) return new Map()
      return filesOf(base(), git.TREE({ ref: oid }), prefix)
    },
    async readBlob(oid: string) {
      return new Uint8Array((await git.readBlob({ ...base(), oid })).blob)
    },
    workFile: (path: string) => workFile(fs, abs(path)),
    writeWorkFile: (path: string, data: Uint8Array) => writeWorkFile(fs, abs, path, data),
    removeWorkFile: (path: string) => removeWorkFile(fs, abs, path),
    writeTreeOf: (files: FileMap) => writeTreeOf(base(), files),
    peelToCommit: (oid: string) => peelToCommit(base(), oid),
  })
  return context
}

async function readText(fs: IsoGitFs, path: string): Promise<string | undefined> {
  try {
    return String(await fs.promises.readFile(path, { encoding: 'utf8' }))
  } catch (error) {
    if (isNotFound(error)) return undefined
    throw error
  }
}

async function readBytes(fs: IsoGitFs, path: string): Promise<Uint8Array | undefined> {
  try {
    const data = await fs.promises.readFile(path)
    return data instanceof Uint8Array ? data : encoder.encode(data)
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code
    if (isNotFound(error) || code === 'EISDIR' || code === 'ENOTDIR') return undefined
    throw error
  }
}

async function listDir(fs: IsoGitFs, path: string): Promise<string[]> {
  try {
    return await fs.promises.readdir(path)
  } catch (error) {
    if (isNotFound(error) || (error as { code?: unknown }).code === 'ENOTDIR') return []
    throw error
  }
}

type Base = { fs: IsoGitFs; dir: string; cache: object }

async function filesOf(
  base: Base,
  walker: ReturnType<typeof git.TREE>,
  prefix: string,
): Promise<FileMap> {
  const out: FileMap = new Map()
  await git.walk({
    ...base,
    trees: [walker],
    map: async (path, [entry]) => {
      if (path === '.') return undefined
      if (!inPrefixOrAbove(path, prefix)) return null
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

const inPrefixOrAbove = (path: string, prefix: string) =>
  inPrefix(path, prefix) || prefix.startsWith(`${path}/`)

async function workFile(fs: IsoGitFs, path: string): Promise<Uint8Array | undefined> {
  try {
    const s = await fs.promises.lstat(path)
    if (s.isDirectory()) return undefined
    const data = await fs.promises.readFile(path)
    return data instanceof Uint8Array ? new Uint8Array(data) : encoder.encode(data)
  } catch (error) {
    if (isNotFound(error) || (error as { code?: unknown }).code === 'ENOTDIR') return undefined
    throw error
  }
}

async function writeWorkFile(
  fs: IsoGitFs,
  abs: (path: string) => string,
  path: string,
  data: Uint8Array,
): Promise<void> {
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

async function removeWorkFile(
  fs: IsoGitFs,
  abs: (path: string) => string,
  path: string,
): Promise<void> {
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

async function writeTreeOf(base: Base, files: FileMap): Promise<string> {
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
    return git.writeTree({ ...base, tree })
  }
  return write(root)
}

async function peelToCommit(base: Base, oid: string): Promise<string | undefined> {
  try {
    for (let i = 0; i < 8; i++) {
      const object = await git.readObject({ ...base, oid, format: 'parsed' })
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
