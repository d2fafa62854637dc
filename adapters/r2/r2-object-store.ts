import type {
  ObjectBody,
  ObjectHead,
  ObjectRange,
  ObjectStore,
  PutCondition,
} from '../../src/object-store/index.ts'
import type { R2BucketLike, R2ConditionalLike, R2ObjectLike } from './r2-bucket.ts'
import { isUnsatisfiableRange, r2Error } from './r2-errors.ts'

const headOf = (object: R2ObjectLike): ObjectHead => {
  const mtimeMs = object.uploaded instanceof Date ? object.uploaded.getTime() : undefined
  const head = { size: object.size, version: object.etag }
  return mtimeMs === undefined ? head : { ...head, mtimeMs }
}

/** R2's `onlyIf` for a `put` condition (etags without quotes, as R2 takes them). */
const onlyIfOf = (condition: PutCondition): R2ConditionalLike =>
  'ifNoneMatch' in condition ? { etagDoesNotMatch: '*' } : { etagMatches: condition.ifMatch }

/**
 * The R2 driver of the object-store core, over a Workers binding (`env.BUCKET`): `head`, `get`
 * with a range, `put` with `onlyIf` (R2 enforces it: `null` is a refused condition), `delete`,
 * `list` with delimiter and cursor. The binding has no copy: a copy reads the bytes and puts them.
 */
export function r2ObjectStore(bucket: R2BucketLike, binding: string): ObjectStore {
  return {
    name: 'R2',
    errorData: { binding },
    conditionsEnforced: true,
    conditionalWrites: async () => true,
    async head(key) {
      const object = await bucket.head(key)
      return object === null ? undefined : headOf(object)
    },
    get: (key, range) => getRange(bucket, key, range),
    async put(key, data, condition) {
      const written = await (condition === undefined
        ? bucket.put(key, data)
        : bucket.put(key, data, { onlyIf: onlyIfOf(condition) }))
      return written === null ? 'conflict' : { version: written.etag }
    },
    delete: (keys) => bucket.delete(keys.length === 1 ? keys[0]! : [...keys]),
    async list({ prefix, delimiter, cursor, startAfter, limit }) {
      const out = await bucket.list({
        prefix,
        limit,
        ...(delimiter === undefined ? {} : { delimiter }),
        ...(cursor === undefined ? {} : { cursor }),
        ...(startAfter === undefined ? {} : { startAfter }),
      })
      const objects = (out.objects ?? []).map((o) => ({ key: o.key, size: o.size }))
      const prefixes = out.delimitedPrefixes ?? []
      return out.truncated && typeof out.cursor === 'string' && out.cursor !== ''
        ? { objects, prefixes, cursor: out.cursor }
        : { objects, prefixes }
    },
    async copy(from, to, _size, read) {
      await bucket.put(to, await read(from))
    },
    error: (error, at) => r2Error(error, { ...at, binding }),
  } satisfies ObjectStore
}

/**
 * A `get` of the range. R2 answers a range at or past the end (and, in local workerd, any range
 * of an empty object) with an error: whether the object is there and how large decides what it
 * meant.
 */
async function getRange(
  bucket: R2BucketLike,
  key: string,
  { start, length }: ObjectRange,
): Promise<ObjectBody | 'missing' | 'empty'> {
  const ranged = start > 0 || length !== undefined
  let object
  try {
    object = await bucket.get(
      key,
      ranged
        ? { range: length === undefined ? { offset: start } : { offset: start, length } }
        : undefined,
    )
  } catch (error) {
    if (!ranged) throw error
    const found = await bucket.head(key)
    if (found === null) return 'missing'
    if (start >= found.size || isUnsatisfiableRange(error)) return 'empty'
    throw error
  }
  if (object === null) return 'missing'
  const expected = Math.max(0, Math.min(object.size - start, length ?? Number.POSITIVE_INFINITY))
  // `body` is only touched when streamed: reading it first would leave `arrayBuffer()` nothing.
  return {
    get body() {
      return object.body
    },
    expected,
    arrayBuffer: () => object.arrayBuffer(),
  }
}
