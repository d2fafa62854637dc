import {
  keyedLock,
  IsoagentError,
  WorkspacePath,
  type ByteRange,
  type ListOptions,
  type ListPage,
  type WorkspaceServices,
  type WorkspaceStat,
  type WriteOptions,
  type WriteOutcome,
} from '../../src/index.ts'
import { KeySpace, normalisePrefix } from '../s3/s3-keys.ts'
import { listDirectory, type RawPage } from '../s3/s3-list.ts'
import type {
  R2BucketLike,
  R2ConditionalLike,
  R2ListOptionsLike,
  R2ObjectBodyLike,
  R2ObjectLike,
} from './r2-bucket.ts'
import { isUnsatisfiableRange, r2Error } from './r2-errors.ts'

const DELETE_BATCH = 1000
const MAX_LIST_LIMIT = 1000
const COPY_CONCURRENCY = 8

/** Options of {@link r2Workspace}. */
export interface R2WorkspaceOptions {
  /**
   * Key prefix that is the workspace root, and a wall: no key outside it is ever read, listed or
   * written. `'team/repo'` and `'team/repo/'` are the same; default `''`, the whole bucket.
   */
  prefix?: string
  /**
   * Name of the binding (default `'BUCKET'`): shown in messages and kept in the session
   * snapshot's descriptor, so a Worker can rebind it on resume.
   */
  binding?: string
  /** Keys asked for per `list` call (1..1000, default 1000, R2's maximum). */
  listPageSize?: number
}

/** An R2 workspace: the port, with its descriptor. */
export interface R2WorkspaceServices extends WorkspaceServices {
  readonly descriptor: { kind: 'r2'; binding: string; prefix: string }
}

const versionOf = (object: R2ObjectLike) => object.etag

async function mapLimit<T>(items: readonly T[], limit: number, run: (item: T) => Promise<void>) {
  let next = 0
  let failed = false
  const worker = async () => {
    while (!failed && next < items.length) {
      const item = items[next++]!
      try {
        await run(item)
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

function isBucket(value: unknown): value is R2BucketLike {
  if (typeof value !== 'object' || value === null) return false
  const b = value as Record<string, unknown>
  return ['head', 'get', 'put', 'list', 'delete'].every((m) => typeof b[m] === 'function')
}

/**
 * A workspace in a Cloudflare R2 bucket, over the Workers binding (`env.BUCKET`), under a key
 * prefix. The same model as the S3 workspace:
 *
 * - **Files** are objects: `key = prefix + path`. A read of a range is one `get` with `range`
 *   (only those bytes travel); `stat` is a `head`: size, `mtimeMs` (upload time) and
 *   `version` = the object's etag.
 * - **Directories** are key prefixes: a directory exists when any key starts with `dir/` (a
 *   zero-byte marker object `dir/` counts, and `mkdir` writes one). Listings use `list` with
 *   delimiter `/`, `startAfter` and cursors, every page; removing a directory's last entry leaves
 *   a marker, so the directory stays, as on disk.
 * - **Writes** are one `put` (atomic: readers see the old or the new object). Preconditions are
 *   enforced by R2 itself: `ifVersion` is sent as `onlyIf: { etagMatches }` and `ifAbsent` as
 *   `onlyIf: { etagDoesNotMatch: '*' }`; R2 refuses a put whose condition no longer holds, so of
 *   two concurrent edits from one version exactly one lands and the other is a
 *   `version_conflict`, whoever runs them (`capabilities.conditionalWrite` is true).
 * - **remove** deletes one object, or every key under `dir/` in batches of 1000. **rename** copies
 *   (a `get` then a `put`: the binding has no copy) and then deletes; directories are renamed key
 *   by key, all copies first. Neither is atomic across keys.
 * - **The prefix is a wall**: keys are rebuilt from normalised paths and checked again, and every
 *   key a listing returns is checked to lie under the prefix before it is shown or deleted.
 *
 * Capabilities: read, write, search; no exec, git, symlinks or local root (no `bash`, `git` or
 * `download`). Git is withheld for the reasons it is on S3: git moves refs and the index into
 * place with lock-file-and-rename, and R2 has no rename (a copy then a delete, neither atomic) and
 * no conditional delete, so an interrupted or concurrent commit could leave a branch pointing at
 * objects that never landed. Clone into a memory workspace to use git on the files.
 */
export function r2Workspace(
  bucket: R2BucketLike,
  options: R2WorkspaceOptions = {},
): R2WorkspaceServices {
  if (!isBucket(bucket))
    throw new IsoagentError(
      'invalid_argument',
      'r2Workspace needs an R2 bucket binding (an object with head, get, put, list and delete)',
    )
  if (typeof options !== 'object' || options === null)
    throw new IsoagentError('invalid_argument', 'r2Workspace options must be { prefix?, binding? }')
  const binding = options.binding ?? 'BUCKET'
  // eslint-disable-next-line no-control-regex
  if (typeof binding !== 'string' || binding === '' || /[\u0000-\u001f\u007f]/.test(binding))
    throw new IsoagentError('invalid_argument', 'binding must be a non-empty name')
  const pageSize = options.listPageSize ?? MAX_LIST_LIMIT
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_LIST_LIMIT)
    throw new IsoagentError('invalid_argument', `listPageSize must be an integer in 1..1000`)
  const prefix = normalisePrefix(options.prefix, 'R2')
  const keys = new KeySpace(prefix, 'R2')
  const withLock = keyedLock()

  const fail = (error: unknown, op: string, path?: string) =>
    r2Error(error, path === undefined ? { op, binding } : { op, binding, path })
  const display = (path: string) => WorkspacePath.display(path as WorkspacePath)
  const notFound = (path: string) =>
    new IsoagentError('not_found', `not found: ${display(path)}`, { data: { path } })
  const isDirectory = (path: string) =>
    new IsoagentError('is_directory', `${display(path)} is a directory`, { data: { path } })
  const notDirectory = (path: string, file: string) =>
    new IsoagentError('not_directory', `${file} is a file, not a directory`, {
      data: { path, file },
    })
  const cancelled = (op: string, path: string) =>
    new IsoagentError('cancelled', `${op} of ${display(path)} cancelled`, { data: { op, path } })
  const checkSignal = (signal: AbortSignal | undefined, op: string, path: string) => {
    if (signal?.aborted) throw cancelled(op, path)
  }

  /** Run one binding call; a failure becomes a typed {@link r2Error}. */
  async function call<T>(op: string, path: string | undefined, run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (error) {
      throw fail(error, op, path)
    }
  }

  const head = (key: string, op: string, path: string) => call(op, path, () => bucket.head(key))

  /** One `list` page, only keys under the prefix kept: nothing outside the wall gets through. */
  async function listPage(request: R2ListOptionsLike, op: string, path: string): Promise<RawPage> {
    const out = await call(op, path, () => bucket.list(request))
    const objects: RawPage['objects'] = []
    for (const o of out.objects ?? [])
      if (keys.contains(o.key)) objects.push({ key: o.key, size: o.size })
    const prefixes = (out.delimitedPrefixes ?? []).filter((p) => keys.contains(p))
    return out.truncated && typeof out.cursor === 'string' && out.cursor !== ''
      ? { objects, prefixes, next: out.cursor }
      : { objects, prefixes }
  }

  /** Whether any key starts with `dirPrefix`. */
  async function exists(dirPrefix: string, op: string, path: string) {
    const out = await listPage({ prefix: dirPrefix, limit: 1 }, op, path)
    return (
      out.objects.some((o) => o.key.startsWith(dirPrefix)) ||
      out.prefixes.some((p) => p.startsWith(dirPrefix))
    )
  }

  const dirExists = (path: WorkspacePath, op: string) =>
    path === '' ? Promise.resolve(true) : exists(keys.dir(path), op, path)

  /** The outermost ancestor directory of `path` that is a file (an object), if any. */
  async function fileAncestor(path: WorkspacePath, op: string) {
    const ancestors: WorkspacePath[] = []
    for (let p = WorkspacePath.parent(path); p !== ''; p = WorkspacePath.parent(p))
      ancestors.push(p)
    const found = await Promise.all(ancestors.map((a) => head(keys.file(a), op, a)))
    for (let i = ancestors.length - 1; i >= 0; i--) if (found[i] !== null) return ancestors[i]
    return undefined
  }

  /** Keep `dir` existing after its last entry went away (as a directory on disk would). */
  async function keepDirectory(dir: WorkspacePath, op: string) {
    if (dir === '') return
    if (!(await dirExists(dir, op)))
      await call(op, dir, () => bucket.put(keys.dir(dir), new Uint8Array()))
  }

  /** Fails like a read of `path` would when it is no file. */
  async function missing(path: WorkspacePath, op: string): Promise<never> {
    if (await dirExists(path, op)) throw isDirectory(path)
    throw notFound(path)
  }

  function normaliseRange(range: ByteRange = {}) {
    const start = Math.max(0, Math.floor(range.offset ?? 0))
    const length = range.length === undefined ? undefined : Math.max(0, Math.floor(range.length))
    return { start, length }
  }

  /**
   * The object at `path` with the bytes `[start, start + length)`, or `'empty'` when the range
   * starts at or past its end (R2 refuses such a range; the object is then checked with `head`).
   */
  async function getObject(
    path: WorkspacePath,
    start: number,
    length: number | undefined,
    op: string,
  ): Promise<R2ObjectBodyLike | 'empty'> {
    if (path === '') throw isDirectory(path)
    const key = keys.file(path)
    if (length === 0) {
      if ((await head(key, op, path)) === null) return missing(path, op)
      return 'empty'
    }
    const ranged = start > 0 || length !== undefined
    let object: R2ObjectBodyLike | null
    try {
      object = await bucket.get(
        key,
        ranged
          ? { range: length === undefined ? { offset: start } : { offset: start, length } }
          : undefined,
      )
    } catch (error) {
      if (!ranged) throw fail(error, op, path)
      // R2 answers a range at or past the end (and, in local workerd, any range of an empty
      // object) with an error: whether the object is there and how large decides what it meant.
      const found = await head(key, op, path)
      if (found === null) return missing(path, op)
      if (start >= found.size) return 'empty'
      if (isUnsatisfiableRange(error)) return 'empty'
      throw fail(error, op, path)
    }
    if (object === null) return missing(path, op)
    return object
  }

  /** How many bytes a get of `[start, start + length)` of `object` must give. */
  const expectedBytes = (object: R2ObjectLike, start: number, length: number | undefined) =>
    Math.max(0, Math.min(object.size - start, length ?? Number.POSITIVE_INFINITY))

  const short = (path: string, op: string, got: number, expected: number) =>
    new IsoagentError(
      'io',
      `R2 ${op} of ${display(path)} failed: the body ended after ${got} of ${expected} bytes`,
      { data: { op, binding, path, received_bytes: got, expected_bytes: expected } },
    )

  async function read(path: WorkspacePath, range?: ByteRange): Promise<Uint8Array> {
    const { start, length } = normaliseRange(range)
    const object = await getObject(path, start, length, 'read')
    if (object === 'empty') return new Uint8Array()
    const bytes = new Uint8Array(await call('read', path, () => object.arrayBuffer()))
    const expected = expectedBytes(object, start, length)
    if (bytes.length !== expected) throw short(path, 'read', bytes.length, expected)
    return bytes
  }

  async function readStream(
    path: WorkspacePath,
    range?: ByteRange,
  ): Promise<ReadableStream<Uint8Array>> {
    const { start, length } = normaliseRange(range)
    const object = await getObject(path, start, length, 'read')
    if (object === 'empty') return new ReadableStream<Uint8Array>({ start: (c) => c.close() })
    const expected = expectedBytes(object, start, length)
    const reader = object.body.getReader()
    let received = 0
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        for (;;) {
          let step: Awaited<ReturnType<typeof reader.read>>
          try {
            step = await reader.read()
          } catch (error) {
            controller.error(fail(error, 'read', path))
            return
          }
          if (step.done) {
            if (received !== expected) controller.error(short(path, 'read', received, expected))
            else controller.close()
            return
          }
          const value = step.value
          if (value === undefined) continue
          const chunk =
            value instanceof ArrayBuffer
              ? new Uint8Array(value)
              : new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
          received += chunk.length
          if (chunk.length > 0) {
            controller.enqueue(chunk)
            return
          }
        }
      },
      async cancel(reason) {
        await reader.cancel(reason).catch(() => {})
      },
    })
  }

  function conflict(path: string, expected: string | null, actual: string | null, message: string) {
    return new IsoagentError('version_conflict', message, { data: { path, expected, actual } })
  }

  async function write(
    path: WorkspacePath,
    data: Uint8Array,
    writeOptions: WriteOptions = {},
  ): Promise<WriteOutcome> {
    if (path === '') throw isDirectory(path)
    const key = keys.file(path)
    const { signal, precondition: pre } = writeOptions
    checkSignal(signal, 'write', path)
    return withLock(key, async () => {
      const parent = WorkspacePath.parent(path)
      const [current, isDir, ancestor, parentExists] = await Promise.all([
        head(key, 'write', path),
        exists(keys.dir(path), 'write', path),
        fileAncestor(path, 'write'),
        writeOptions.createParents === false ? dirExists(parent, 'write') : Promise.resolve(true),
      ])
      if (isDir) throw isDirectory(path)
      if (ancestor !== undefined) throw notDirectory(path, ancestor)
      if (!parentExists) throw notFound(parent)
      const actual = current === null ? null : versionOf(current)
      if (pre?.ifAbsent && actual !== null)
        throw conflict(path, null, actual, `${path} was created by someone else meanwhile`)
      if (pre?.ifVersion !== undefined && actual !== pre.ifVersion)
        throw conflict(path, pre.ifVersion, actual, `${path} changed since it was read`)
      checkSignal(signal, 'write', path)

      // The same condition again, now enforced by R2 at the moment the put lands.
      const onlyIf: R2ConditionalLike | undefined = pre?.ifAbsent
        ? { etagDoesNotMatch: '*' }
        : pre?.ifVersion !== undefined
          ? { etagMatches: pre.ifVersion }
          : undefined
      const written = await call('write', path, () =>
        onlyIf === undefined ? bucket.put(key, data) : bucket.put(key, data, { onlyIf }),
      )
      if (written === null) {
        const now = await head(key, 'write', path).catch(() => null)
        throw conflict(
          path,
          pre?.ifVersion ?? null,
          now === null ? null : versionOf(now),
          pre?.ifAbsent
            ? `${path} was created by someone else meanwhile`
            : `${path} changed since it was read`,
        )
      }
      return { created: current === null, version: versionOf(written) }
    })
  }

  /** Delete `keyList` (all under the wall) in batches of 1000. */
  async function deleteKeys(keyList: string[], op: string, path: string) {
    for (const k of keyList)
      if (!keys.contains(k))
        throw new IsoagentError('path_escape', `refusing to delete ${k}: outside the prefix`, {
          data: { path },
        })
    for (let i = 0; i < keyList.length; i += DELETE_BATCH) {
      const batch = keyList.slice(i, i + DELETE_BATCH)
      await call(op, path, () => bucket.delete(batch))
    }
  }

  /** Every key (with its size) starting with `dirPrefix`, all pages. */
  async function keysUnder(dirPrefix: string, op: string, path: string) {
    const found = new Map<string, number>()
    let cursor: string | undefined
    do {
      const out = await listPage(
        { prefix: dirPrefix, limit: pageSize, ...(cursor === undefined ? {} : { cursor }) },
        op,
        path,
      )
      for (const o of out.objects) if (o.key.startsWith(dirPrefix)) found.set(o.key, o.size ?? 0)
      cursor = out.next
    } while (cursor !== undefined)
    return [...found.keys()]
  }

  /** Copy one object: the binding has no copy, so its bytes are read and put again. */
  async function copyKey(from: string, to: string, op: string, path: string) {
    const object = await call(op, path, () => bucket.get(from))
    if (object === null)
      throw new IsoagentError('version_conflict', `${path} changed while it was moved`, {
        data: { path, expected: null, actual: null },
      })
    const bytes = new Uint8Array(await call(op, path, () => object.arrayBuffer()))
    if (bytes.length !== object.size) throw short(path, op, bytes.length, object.size)
    await call(op, path, () => bucket.put(to, bytes))
  }

  async function stat(path: WorkspacePath): Promise<WorkspaceStat | undefined> {
    if (path === '') return { path, kind: 'directory', size: 0, version: 'dir' }
    const found = await head(keys.file(path), 'stat', path)
    if (found !== null) {
      const mtimeMs = found.uploaded instanceof Date ? found.uploaded.getTime() : undefined
      return {
        path,
        kind: 'file',
        size: found.size,
        ...(mtimeMs === undefined || Number.isNaN(mtimeMs) ? {} : { mtimeMs }),
        version: versionOf(found),
      }
    }
    if (await dirExists(path, 'stat')) return { path, kind: 'directory', size: 0, version: 'dir' }
    return undefined
  }

  async function list(path: WorkspacePath, listOptions: ListOptions = {}): Promise<ListPage> {
    const base = keys.dir(path)
    checkSignal(listOptions.signal, 'list', path)
    const { page, sawAny } = await listDirectory(
      {
        page: ({ token, startAfter }) =>
          listPage(
            {
              prefix: base,
              delimiter: '/',
              limit: pageSize,
              ...(token !== undefined ? { cursor: token } : {}),
              ...(token === undefined && startAfter !== undefined ? { startAfter } : {}),
            },
            'list',
            path,
          ),
        exists: (dirPrefix) => exists(dirPrefix, 'list', path),
      },
      base,
      { after: listOptions.after, limit: listOptions.limit },
    )
    if (sawAny || path === '') return page
    if (listOptions.after !== undefined && (await dirExists(path, 'list'))) return page
    if ((await head(keys.file(path), 'list', path)) !== null)
      throw new IsoagentError('not_directory', `${path} is a file, not a directory`, {
        data: { path },
      })
    throw notFound(path)
  }

  return {
    capabilities: {
      read: true,
      write: true,
      exec: false,
      git: false,
      search: true,
      atomicRename: true,
      conditionalWrite: true,
      symlinks: false,
    },
    descriptor: { kind: 'r2', binding, prefix },

    stat,
    read,
    readStream,
    write,
    list,

    async mkdir(path) {
      if (path === '') return
      const key = keys.dir(path)
      const [self, ancestor, already] = await Promise.all([
        head(keys.file(path), 'mkdir', path),
        fileAncestor(path, 'mkdir'),
        exists(key, 'mkdir', path),
      ])
      if (ancestor !== undefined) throw notDirectory(path, ancestor)
      if (self !== null)
        throw new IsoagentError('already_exists', `${path} is a file`, { data: { path } })
      if (already) return
      await call('mkdir', path, () => bucket.put(key, new Uint8Array()))
    },

    async remove(path, removeOptions = {}) {
      if (path === '')
        throw new IsoagentError('invalid_argument', 'refusing to remove the workspace root')
      const key = keys.file(path)
      if ((await head(key, 'remove', path)) !== null) {
        await withLock(key, () => call('remove', path, () => bucket.delete(key)))
        await keepDirectory(WorkspacePath.parent(path), 'remove')
        return
      }
      const base = keys.dir(path)
      const some = await listPage({ prefix: base, limit: 2 }, 'remove', path)
      const found = some.objects.map((o) => o.key).filter((k) => k.startsWith(base))
      if (found.length === 0) throw notFound(path)
      const empty = found.every((k) => k === base)
      if (!empty && removeOptions.recursive !== true)
        throw new IsoagentError('not_empty', `${path} is not empty`, { data: { path } })
      if (empty) await call('remove', path, () => bucket.delete(base))
      else await deleteKeys(await keysUnder(base, 'remove', path), 'remove', path)
      await keepDirectory(WorkspacePath.parent(path), 'remove')
    },

    async rename(from, to) {
      if (from === '' || to === '')
        throw new IsoagentError(
          'invalid_argument',
          'the workspace root cannot be renamed or replaced',
        )
      if (from === to) {
        if ((await stat(from)) === undefined) throw notFound(from)
        return
      }
      const fromKey = keys.file(from)
      const toKey = keys.file(to)
      const [source, toFile, toDirKeys, ancestor] = await Promise.all([
        head(fromKey, 'rename', from),
        head(toKey, 'rename', to),
        listPage({ prefix: keys.dir(to), limit: 2 }, 'rename', to).then((out) =>
          out.objects.map((o) => o.key),
        ),
        fileAncestor(to, 'rename'),
      ])
      if (ancestor !== undefined) throw notDirectory(to, ancestor)

      if (source !== null) {
        if (toDirKeys.length > 0) throw isDirectory(to)
        // Both keys locked, always in the same order, so opposite renames cannot deadlock.
        const [first, second] = [fromKey, toKey].sort()
        await withLock(first!, () =>
          withLock(second!, async () => {
            await copyKey(fromKey, toKey, 'rename', from)
            await call('rename', from, () => bucket.delete(fromKey))
          }),
        )
        await keepDirectory(WorkspacePath.parent(from), 'rename')
        return
      }

      const fromBase = keys.dir(from)
      const toBase = keys.dir(to)
      if (to.startsWith(from + '/'))
        throw new IsoagentError('invalid_argument', `cannot move ${from} into itself (${to})`, {
          data: { path: from, to },
        })
      const all = await keysUnder(fromBase, 'rename', from)
      if (all.length === 0) throw notFound(from)
      if (toFile !== null)
        throw new IsoagentError('not_directory', `${to} is a file, not a directory`, {
          data: { path: to },
        })
      if (toDirKeys.some((k) => k !== toBase))
        throw new IsoagentError('not_empty', `${to} is not empty`, { data: { path: to } })
      // Every target key is checked before anything is copied; markers (`…/`) stay markers.
      const targets = all.map((key) => {
        const rest = key.slice(fromBase.length)
        const target =
          rest === ''
            ? toBase
            : rest.endsWith('/')
              ? keys.check(`${to}/${rest.slice(0, -1)}`, '/')
              : keys.check(`${to}/${rest}`, '')
        return { from: key, to: target }
      })
      await mapLimit(targets, COPY_CONCURRENCY, (t) => copyKey(t.from, t.to, 'rename', from))
      await deleteKeys(all, 'rename', from)
      await keepDirectory(WorkspacePath.parent(from), 'rename')
    },
  } satisfies R2WorkspaceServices
}
