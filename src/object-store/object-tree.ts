import { IsoagentError } from '../errors.ts'
import {
  isDirectoryError,
  keyedLock,
  normaliseRange,
  notFoundError,
} from '../workspace/adapter-kit.ts'
import { WorkspacePath } from '../workspace/workspace-path.ts'
import type { ByteRange, WorkspaceStat } from '../workspace/workspace-services.ts'
import type { RawPage } from './directory-listing.ts'
import { collectBytes, guardBody } from './guarded-body.ts'
import type { KeySpace } from './key-space.ts'
import type { ListRequest, ObjectBody, ObjectHead, ObjectStore } from './object-store.ts'

const DELETE_BATCH = 1000
const display = (path: string) => WorkspacePath.display(path as WorkspacePath)

/**
 * An {@link ObjectStore} seen as a tree under one prefix: the requests the workspace steps share
 * (typed errors, the prefix wall on every listed key, directories as key prefixes, guarded reads).
 */
export class ObjectTree {
  /** Serialises writes, removals and renames of one key within this workspace. */
  readonly withLock = keyedLock()

  constructor(
    readonly store: ObjectStore,
    readonly keys: KeySpace,
    /** Keys asked for per `list` request. */
    readonly pageSize: number,
  ) {}

  /** The typed error of a failed store call. */
  fail(error: unknown, op: string, path?: string): Error {
    return this.store.error(error, path === undefined ? { op } : { op, path })
  }

  /** Run one store call; a failure becomes the store's typed error. */
  async call<T>(op: string, path: string | undefined, run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (error) {
      throw this.fail(error, op, path)
    }
  }

  /** `cancelled` when `signal` has fired. */
  checkSignal(signal: AbortSignal | undefined, op: string, path: string): void {
    if (signal?.aborted)
      throw new IsoagentError('cancelled', `${op} of ${display(path)} cancelled`, {
        data: { op, path },
      })
  }

  head(key: string, op: string, path: string, signal?: AbortSignal) {
    return this.call(op, path, () => this.store.head(key, signal))
  }

  /** One `list` page, only keys under the prefix kept: nothing outside the wall gets through. */
  async listPage(
    request: ListRequest,
    op: string,
    path: string,
    signal?: AbortSignal,
  ): Promise<RawPage> {
    const out = await this.call(op, path, () => this.store.list(request, signal))
    const objects = out.objects.filter((o) => this.keys.contains(o.key))
    const prefixes = out.prefixes.filter((p) => this.keys.contains(p))
    return out.cursor ? { objects, prefixes, next: out.cursor } : { objects, prefixes }
  }

  /** Whether any key starts with `dirPrefix`. */
  async exists(dirPrefix: string, op: string, path: string, signal?: AbortSignal) {
    const out = await this.listPage({ prefix: dirPrefix, limit: 1 }, op, path, signal)
    return (
      out.objects.some((o) => o.key.startsWith(dirPrefix)) ||
      out.prefixes.some((p) => p.startsWith(dirPrefix))
    )
  }

  dirExists(path: WorkspacePath, op: string, signal?: AbortSignal): Promise<boolean> {
    return path === '' ? Promise.resolve(true) : this.exists(this.keys.dir(path), op, path, signal)
  }

  /** The outermost ancestor directory of `path` that is a file (an object), if any. */
  async fileAncestor(path: WorkspacePath, op: string, signal?: AbortSignal) {
    const ancestors: WorkspacePath[] = []
    for (let p = WorkspacePath.parent(path); p !== ''; p = WorkspacePath.parent(p))
      ancestors.push(p)
    const found = await Promise.all(
      ancestors.map((a) => this.head(this.keys.file(a), op, a, signal)),
    )
    for (let i = ancestors.length - 1; i >= 0; i--) if (found[i] !== undefined) return ancestors[i]
    return undefined
  }

  /** Keep `dir` existing after its last entry went away (as a directory on disk would). */
  async keepDirectory(dir: WorkspacePath, op: string): Promise<void> {
    if (dir === '') return
    if (!(await this.dirExists(dir, op)))
      await this.call(op, dir, () => this.store.put(this.keys.dir(dir), new Uint8Array()))
  }

  /** Fails like a read of `path` would when it is no file. */
  async missing(path: WorkspacePath, op: string, signal?: AbortSignal): Promise<never> {
    if (await this.dirExists(path, op, signal)) throw isDirectoryError(path)
    throw notFoundError(path)
  }

  /** Every key (with its size) starting with `dirPrefix`, all pages, each once. */
  async keysUnder(dirPrefix: string, op: string, path: string) {
    const found = new Map<string, { key: string; size: number }>()
    let cursor: string | undefined
    do {
      const request = { prefix: dirPrefix, limit: this.pageSize }
      const out = await this.listPage(cursor ? { ...request, cursor } : request, op, path)
      for (const o of out.objects)
        if (o.key.startsWith(dirPrefix)) found.set(o.key, { key: o.key, size: o.size ?? 0 })
      cursor = out.next
    } while (cursor !== undefined)
    return [...found.values()]
  }

  /** Delete `keyList` (all checked to lie under the wall first) in batches of 1000. */
  async deleteKeys(keyList: readonly string[], op: string, path: string): Promise<void> {
    for (const k of keyList)
      if (!this.keys.contains(k))
        throw new IsoagentError('path_escape', `refusing to delete ${k}: outside the prefix`, {
          data: { path },
        })
    for (let i = 0; i < keyList.length; i += DELETE_BATCH) {
      const batch = keyList.slice(i, i + DELETE_BATCH)
      await this.call(op, path, () => this.store.delete(batch))
    }
  }

  /**
   * The body of the bytes `range` of the file at `path`, or undefined when there are none (an
   * empty range, or one at or past the end). Not a file: `is_directory` / `not_found`.
   */
  async open(
    path: WorkspacePath,
    range: ByteRange | undefined,
    op: string,
    signal?: AbortSignal,
  ): Promise<ObjectBody | undefined> {
    if (path === '') throw isDirectoryError(path)
    const key = this.keys.file(path)
    const { start, length } = normaliseRange(range)
    if (length === 0) {
      if ((await this.head(key, op, path, signal)) === undefined)
        await this.missing(path, op, signal)
      return undefined
    }
    const request = length === undefined ? { start } : { start, length }
    const got = await this.call(op, path, () => this.store.get(key, request, signal))
    if (got === 'missing') return this.missing(path, op, signal)
    return got === 'empty' ? undefined : got
  }

  /** `got`'s bytes as a stream, checked against its length and clipped (shown as `path`). */
  stream(got: ObjectBody, path: string, op: string): ReadableStream<Uint8Array> {
    return guardBody(got.body, {
      expected: got.expected,
      skip: got.skip ?? 0,
      take: got.take,
      fail: (error) => this.fail(error, op, path),
      short: (received, expected) => this.short(path, op, received, expected),
    })
  }

  /** All of `got`'s bytes, checked like {@link ObjectTree.stream} checks them. */
  async bytes(got: ObjectBody, path: string, op: string): Promise<Uint8Array> {
    const whole = got.arrayBuffer
    if (whole === undefined || got.skip !== undefined || got.take !== undefined)
      return collectBytes(this.stream(got, path, op))
    const bytes = new Uint8Array(await this.call(op, path, () => whole.call(got)))
    if (got.expected !== undefined && bytes.length !== got.expected)
      throw this.short(path, op, bytes.length, got.expected)
    return bytes
  }

  private short(path: string, op: string, received: number, expected: number): IsoagentError {
    const { name, errorData } = this.store
    return new IsoagentError(
      'io',
      `${name} ${op} of ${display(path)} failed: the response ended after ${received} of ${expected} bytes`,
      { data: { op, ...errorData, path, received_bytes: received, expected_bytes: expected } },
    )
  }
}

/** The stat of a file from its head. */
export function fileStat(path: WorkspacePath, head: ObjectHead): WorkspaceStat {
  return {
    path,
    kind: 'file',
    size: head.size,
    ...(head.mtimeMs === undefined || Number.isNaN(head.mtimeMs) ? {} : { mtimeMs: head.mtimeMs }),
    version: head.version,
  }
}

/** The stat of a directory (its version is always `dir`). */
export function directoryStat(path: WorkspacePath): WorkspaceStat {
  return { path, kind: 'directory', size: 0, version: 'dir' }
}
