// The part of the Workers R2 binding (`R2Bucket` of `@cloudflare/workers-types`) the R2 workspace
// uses, as structural types: a real binding (`env.BUCKET`), Miniflare's `getR2Bucket()` proxy or
// any object of this shape fits, and nothing of Cloudflare's is needed at run time.

/** Conditions of a conditional `put` (R2's `R2Conditional`): etags are given without quotes. */
export interface R2ConditionalLike {
  /** Write only when the object exists with this etag (`If-Match`). */
  etagMatches?: string
  /** Write only when the object's etag is not this one; `'*'`: only when there is no object. */
  etagDoesNotMatch?: string
}

/** A byte range of a `get` (R2's `R2Range`, without `suffix`, which the workspace never asks). */
export type R2RangeLike = { offset: number; length?: number } | { offset?: number; length: number }

/** Metadata of one object (R2's `R2Object`): the fields the workspace reads. */
export interface R2ObjectLike {
  readonly key: string
  readonly size: number
  /** The object's etag without quotes: the workspace's version of the file. */
  readonly etag: string
  readonly uploaded: Date
}

/**
 * The body stream of a `get`, as far as the workspace reads it: a Web `ReadableStream` of byte
 * chunks (workerd's, or the one Miniflare's proxy hands to Node).
 */
export interface R2BodyLike {
  getReader(): {
    read(): Promise<{ done: boolean; value?: ArrayBufferView | ArrayBuffer }>
    cancel(reason?: unknown): Promise<void>
  }
}

/** An object with its body (R2's `R2ObjectBody`). */
export interface R2ObjectBodyLike extends R2ObjectLike {
  /** The bytes asked for, as a stream of chunks. */
  readonly body: R2BodyLike
  arrayBuffer(): Promise<ArrayBuffer>
  /** The range served, when a range was asked for. */
  readonly range?: { offset?: number; length?: number } | { suffix: number }
}

/** One page of a listing (R2's `R2Objects`). */
export interface R2ObjectsLike {
  objects: R2ObjectLike[]
  /** With a delimiter: the rolled-up prefixes (`dir/`) of this page. */
  delimitedPrefixes: string[]
  truncated: boolean
  /** Present when `truncated`: pass it as `cursor` for the next page. */
  cursor?: string
}

/** Options of a listing (R2's `R2ListOptions`, the fields the workspace sends). */
export interface R2ListOptionsLike {
  prefix?: string
  delimiter?: string
  cursor?: string
  startAfter?: string
  /** 1..1000. */
  limit?: number
}

/**
 * The R2 binding's methods the workspace calls: `head`, `get` (with a range), `put` (with `onlyIf`
 * etag conditions; `null` when a condition failed), `list` (prefix, delimiter, cursor, startAfter,
 * limit) and `delete` (one key or up to 1000). `R2Bucket` from `@cloudflare/workers-types` is one.
 */
export interface R2BucketLike {
  head(key: string): Promise<R2ObjectLike | null>
  get(key: string, options?: { range?: R2RangeLike }): Promise<R2ObjectBodyLike | null>
  put(
    key: string,
    value: Uint8Array,
    options?: { onlyIf?: R2ConditionalLike },
  ): Promise<R2ObjectLike | null>
  list(options?: R2ListOptionsLike): Promise<R2ObjectsLike>
  delete(keys: string | string[]): Promise<void>
}
