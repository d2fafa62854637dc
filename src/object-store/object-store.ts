/**
 * The `ObjectStore` port: the few calls of a flat key→bytes store (S3, R2, …) that
 * {@link objectStoreWorkspace} needs to make a workspace of it. A driver implements it over its
 * client (`satisfies ObjectStore`); directories, paths, preconditions, listings in the port's
 * order, renames and the prefix wall are the core's.
 *
 * Methods throw the store's own errors; the core turns each into a typed `IsoagentError` with
 * {@link ObjectStore.error}, naming the operation and path. Keys arrive checked (under the prefix,
 * at most 1024 UTF-8 bytes); the driver sends them as they are.
 */
export interface ObjectStore {
  /** The store's name in messages (`S3`, `R2`). */
  readonly name: string
  /** Fields every error of this store carries in its data (`{ bucket }`, `{ binding }`). */
  readonly errorData: Readonly<Record<string, string>>
  /** Whether {@link ObjectStore.put} enforces its condition now, as far as known without asking. */
  readonly conditionsEnforced: boolean
  /** Whether `put` enforces its condition: may ask the store once (S3's probe). */
  conditionalWrites(): Promise<boolean>

  /** The object at `key`, or undefined when there is none. */
  head(key: string, signal?: AbortSignal): Promise<ObjectHead | undefined>
  /**
   * The bytes `[start, start + length)` of `key` (to the end without `length`; `length` is never
   * 0): `'missing'` when there is no object, `'empty'` when the range starts at or past its end.
   */
  get(
    key: string,
    range: ObjectRange,
    signal?: AbortSignal,
  ): Promise<ObjectBody | 'missing' | 'empty'>
  /**
   * Write `data` at `key`. With a `condition` the store must refuse the write when it no longer
   * holds (answering `'conflict'`), if {@link ObjectStore.conditionalWrites} says it can.
   */
  put(
    key: string,
    data: Uint8Array,
    condition?: PutCondition,
    signal?: AbortSignal,
  ): Promise<{ version?: string } | 'conflict'>
  /** Delete `keys` (1 to 1000; absent ones are no failure). */
  delete(keys: readonly string[]): Promise<void>
  /** One page of keys starting with `prefix`, in the store's (UTF-8 byte) order. */
  list(request: ListRequest, signal?: AbortSignal): Promise<ObjectPage>
  /**
   * Copy the object `from` (of `size` bytes) to `to`. `read` gives its bytes through the core
   * (length-checked), for a store that has no copy or cannot do this one server-side.
   */
  copy(from: string, to: string, size: number, read: ReadObject): Promise<void>
  /** The typed error of a failed call, for the operation `op` on `path` (omitted: the store). */
  error(error: unknown, at: { op: string; path?: string }): Error
  /** Release the client, when the driver owns it. */
  close?(): Promise<void>
}

/** What a `head` tells: the object's size, version and modification time. */
export interface ObjectHead {
  size: number
  /** Changes whenever the object does (the ETag without quotes): the file's version. */
  version: string
  mtimeMs?: number
}

/** A byte range of a `get`: from `start`, `length` bytes (≥ 1) or to the end. */
export interface ObjectRange {
  start: number
  length?: number
}

/** A `get`'s answer: the body, and how the core checks and clips it. */
export interface ObjectBody {
  body: ByteSource
  /** Bytes the body must have (it fails with `io` when it ends short or long). */
  expected?: number
  /** Bytes to drop first and at most how many to pass on (a range the store ignored). */
  skip?: number
  take?: number
  /** All the bytes at once, where the store reads them faster so than as a stream (R2). */
  arrayBuffer?(): Promise<ArrayBuffer>
}

/** A stream of byte chunks: a Web `ReadableStream`, or any reader of this shape. */
export interface ByteSource {
  getReader(): {
    read(): Promise<{ done: boolean; value?: ArrayBufferView | ArrayBuffer }>
    cancel(reason?: unknown): Promise<void>
  }
}

/** The condition of a `put`: `If-Match` a version, or `If-None-Match: *` (no object yet). */
export type PutCondition = { ifMatch: string } | { ifNoneMatch: '*' }

/** One `list` request (`delimiter` `/` rolls subdirectories up into `prefixes`). */
export interface ListRequest {
  prefix: string
  delimiter?: '/'
  /** The cursor of the previous page. */
  cursor?: string
  /** Only keys after this one (first page only). */
  startAfter?: string
  limit: number
}

/** One page of a listing: objects, rolled-up prefixes (`dir/`) and the cursor of the next. */
export interface ObjectPage {
  objects: { key: string; size: number }[]
  prefixes: string[]
  /** Present when more follow. */
  cursor?: string
}

/** Reads `[start, start + length)` of `key` through the core (whole object without a range). */
export type ReadObject = (key: string, range?: ObjectRange) => Promise<Uint8Array>
